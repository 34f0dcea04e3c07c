"""Assembly of a host: the configuration's policy names become classes (through the registries in
``policies/``, after any ``--plugin`` module has registered its own) and are handed to the models.

The models never look a name up themselves; an unknown name is a ConfigError here, before anything
is built.
"""

from __future__ import annotations

from models.host import Host, PolicySet
from models.os.completion import select_policy_name
from models.os.queue import QueueConfig
from models.platform import PlatformConfig
from policies.completion import COMPLETION_POLICIES
from policies.cpu_idle import CPUIDLE_GOVERNORS
from policies.cpu_power import CPUFREQ_GOVERNORS
from policies.interrupt_generation import IRQ_GENERATION
from policies.io_scheduler import IO_SCHEDULERS

#: one engine of each kind the completion rule distinguishes (synchronous; libaio; io_uring)
_RULE_ENGINES = ("pvsync2", "libaio", "io_uring")


def resolve_policies(platform: PlatformConfig, queue: QueueConfig) -> PolicySet:
    """The policy classes named by ``platform`` (``cpu.cpufreq_governor``, ``cpu.cpuidle_governor``,
    ``nvme.irq``) and ``queue`` (``scheduler``, the completion rule)."""
    names = {select_policy_name(queue, hipri, engine) for hipri in (False, True) for engine in _RULE_ENGINES}
    return PolicySet(
        cpufreq_governor=CPUFREQ_GOVERNORS.get(platform.cpu.cpufreq_governor),
        cpuidle_governor=CPUIDLE_GOVERNORS.get(platform.cpu.cpuidle_governor),
        io_scheduler=IO_SCHEDULERS.get(queue.scheduler),
        irq_generation=IRQ_GENERATION.get(platform.nvme.irq),
        completion={name: COMPLETION_POLICIES.get(name) for name in sorted(names)},
    )


def build_host(platform: PlatformConfig, queue: QueueConfig, seed: int, tracer=None) -> Host:
    """A :class:`Host` with the policies its configuration names."""
    return Host(platform, queue, seed, resolve_policies(platform, queue), tracer)
