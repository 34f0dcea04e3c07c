"""IO completion policies (block layer): interrupt, classic polling, hybrid polling.

Select the Linux way: queue ``io_poll`` + ``io_poll_delay`` and the job's ``hipri`` flag (see
:func:`select_policy`), or name a registered policy with ``queue.completion``.
"""

from policies.completion import classic_poll, hybrid_poll, interrupt  # noqa: F401  (registration)
from policies.completion.base import COMPLETION_POLICIES, CompletionPolicy, select_policy_name

__all__ = ["COMPLETION_POLICIES", "CompletionPolicy", "select_policy_name"]
