"""Unit conventions and conversions.

Simulated time is in nanoseconds (float, as simpy's clock), CPU work in cycles, frequency in GHz
(so ``ns = cycles / ghz``), power in watts, energy in joules.
"""

NS_PER_US = 1_000.0
NS_PER_MS = 1_000_000.0
NS_PER_S = 1_000_000_000.0
KIB = 1024
MIB = 1024 * 1024


def cycles_to_ns(cycles: float, freq_ghz: float) -> float:
    """Time in ns to execute ``cycles`` at ``freq_ghz`` (1 GHz = 1 cycle per ns)."""
    return cycles / freq_ghz


def ns_to_cycles(ns: float, freq_ghz: float) -> float:
    """Cycles executed in ``ns`` at ``freq_ghz``."""
    return ns * freq_ghz


def us(x: float) -> float:
    """Microseconds to ns."""
    return x * NS_PER_US


def ms(x: float) -> float:
    """Milliseconds to ns."""
    return x * NS_PER_MS


def s(x: float) -> float:
    """Seconds to ns."""
    return x * NS_PER_S


def energy_j(power_w: float, duration_ns: float) -> float:
    """Energy in joules of ``power_w`` held for ``duration_ns``."""
    return power_w * duration_ns / NS_PER_S
