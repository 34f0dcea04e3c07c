"""The completion-policy interface: what a task does after ringing the doorbell; and the Linux rule
that picks a policy's name for a queue and a request (:func:`completion_policy_name`, in the
kernel's terms: the request's HIPRI flag, and whether its submitter reaps its completions itself;
fio's engines state theirs in :func:`models.ioengines.select_policy_name`). Implementations live in
``policies/completion/`` and are registered there by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ClassVar

from mypy_extensions import mypyc_attr

from simcore.config import Model, NoParams, validate
from simcore.errors import ConfigError

if TYPE_CHECKING:
    from models.os.block.host import BlockHost
    from models.os.block.request import Request
    from models.os.sched.runner import CpuRunner
    from models.os.sched.task import Task


@mypyc_attr(allow_interpreted_subclasses=True)  # plug-ins outside the compiled modules extend it
class CompletionPolicy:
    """Decides how the submitting task learns that its request completed.

    ``wait(runner, task, req, then)`` is called on the submitting CPU right after the doorbell;
    it must eventually call ``then()`` with ``task`` running on ``runner`` and ``req.done`` true.
    ``on_complete(req)`` sees every completed request of the queue (for statistics).
    ``polled`` says whether requests go to polled hardware queues (no interrupt vector).
    ``Params`` is the pydantic model of the policy's parameters (none: :class:`NoParams`): a
    plug-in's are set with ``queue.completion_params.NAME`` when ``queue.completion`` names it, and
    the instance reads them validated as ``self.params``.
    """

    name: ClassVar[str] = "abstract"
    polled: ClassVar[bool] = False
    Params: ClassVar[type[Model]] = NoParams

    def __init__(self, host: BlockHost, queue: Any) -> None:
        self.host = host
        self.queue = queue  # models.os.block.queue.QueueConfig
        self.params: Any = completion_params(type(self), queue)

    def wait(self, runner: CpuRunner, task: Task, req: Request, then: Callable[[], None]) -> None:
        raise NotImplementedError

    def on_complete(self, req: Request) -> None:
        pass


def completion_params(cls: type[CompletionPolicy], queue: Any) -> Model:
    """The parameters of completion policy ``cls`` on ``queue``: ``queue.completion_params``
    validated by ``cls.Params`` when ``queue.completion`` names the policy, else its defaults;
    :class:`~simcore.errors.ConfigError` naming the policy and the bad field."""
    data = queue.completion_params if queue.completion == cls.name else {}
    if data and not cls.Params.model_fields:
        raise ConfigError(
            f"queue.completion_params.{next(iter(data))}: completion policy {cls.name} takes no parameters"
        )
    return validate(cls.Params, dict(data), where=f"completion policy {cls.name} (queue.completion_params)")


def completion_policy_name(queue, hipri: bool, reaps_itself: bool = False) -> str:
    """The completion policy of a request by the Linux rules: the one place that decides it from
    the request's HIPRI flag, ``queue.io_poll``, ``queue.io_poll_delay`` and ``queue.completion``,
    and whether the submitter reaps its completions itself.

    - a task that waits in its system call for the IO (a synchronous read or write; ``hipri``:
      RWF_HIPRI): ``queue.completion`` when not ``auto`` (a plug-in); else HIPRI requests poll
      only on a queue with ``io_poll`` on, ``io_poll_delay`` -1 classic polling, 0 adaptive hybrid,
      N > 0 a fixed N us hybrid sleep; everything else takes interrupts;
    - a submitter that reaps its completions itself (``reaps_itself``: an aio context's or an
      io_uring's completion ring; no task waits in the kernel for one IO): with HIPRI (a ring set
      up with IORING_SETUP_IOPOLL) it spins in blk_poll when it reaps (classic polling; it needs
      polled queues, ``queue.io_poll``); otherwise its IOs take interrupts."""
    if reaps_itself:
        return "classic-poll" if hipri else "interrupt"
    if queue.completion != "auto":
        return queue.completion
    if hipri and queue.io_poll:
        return "classic-poll" if queue.io_poll_delay == -1 else "hybrid-poll"
    return "interrupt"
