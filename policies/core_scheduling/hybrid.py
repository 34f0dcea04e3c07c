"""``hybrid``: hybrid polling on the server: each reactor, when a poll finds nothing, sleeps half
the mean service time of its IOs (device time, submit to CQE; 10 us before the first sample), then
polls again; every core independently (the hybrid-polling server SANDMAN compares with: Zhou et al.,
SOSP 2025). The sleep goes through the kernel
(nanosleep: syscall, hrtimer, context switches, the menu-style state choice) or, with
``sleep=mwait``, a user-level timed wait (MWAITX) in C1."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from models.server.reactor import HYBRID
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin
from simcore.config import Model

#: sandman_polling_server.yaml policy_parameters.hybrid_polling_initial_sleep_us
INITIAL_SLEEP_US = 10.0


def sleep_fn(fraction: float, initial_ns: float, server=None):
    """The sleep length of a reactor's next stretch; with ``server``, also pick the kernel's idle
    state for it (the sleep is a kernel timer sleep)."""

    def hyb_sleep(r) -> float:
        ns = fraction * r.svc if r.svc > 0 else initial_ns
        if server is not None:
            r.sleep_cstate = kernel_sleep_state(server, ns)
        return ns

    return hyb_sleep


def kernel_sleep_state(server, sleep_ns: float) -> int:
    """Deepest state within the OS limit whose target residency fits the sleep (else POLL)."""
    st = 0
    for i in range(1, server.os_idle + 1):
        if server.ccfg.cstates[i].target_residency_ns <= sleep_ns:
            st = i
    return st


@CORE_SCHEDULING.register("hybrid")
class HybridPolling(CoreSchedulingPolicy):
    class Params(Model):
        initial_sleep_us: float = Field(INITIAL_SLEEP_US, ge=0, description="sleep before any IO completed, us")
        sleep_fraction: float = Field(0.5, ge=0, description="sleep = this fraction of the mean service time")
        sleep: Literal["kernel", "mwait"] = Field(
            "kernel", description="nanosleep through the kernel, or a user-level timed wait"
        )

    def setup(self) -> None:
        s = self.server
        round_robin(s)
        kernel = self.p.sleep == "kernel"
        fn = sleep_fn(self.p.sleep_fraction, self.p.initial_sleep_us * 1e3, s if kernel else None)
        for r in s.reactors:
            s.set_mode(r, HYBRID, hyb_kind=self.p.sleep, hyb_sleep=fn, cstate=s.c1)
