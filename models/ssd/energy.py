"""An SSD's energy accounts: its cumulative activity and APST credit (:func:`ssd_reading`), and its
energy between two readings (:func:`ssd_energy_j`): idle power plus (active - idle) x the share of
time the stage that sets its ceiling was busy, minus the APST credit (docs/ssd.md). A host's
system power (:mod:`models.power`) and the storage server both read them.
"""

from __future__ import annotations


def ssd_reading(device, now: float) -> tuple[float, float, float]:
    """A device's cumulative energy accounts at ``now``: read and write activity (busy ns of the
    stage that sets its ceiling, per server of that stage: the media data paths when modelled,
    else the media units), and the APST credit (J below idle power)."""
    credit = device.apst.credit_j_at(now) if device.apst is not None else 0.0
    dp = device.cfg.datapath
    if dp is not None:
        return device.busy_path_ns["read"] / dp.count, device.busy_path_ns["write"] / dp.count, credit
    n = device.cfg.parallel_units
    return device.busy_unit_ns["read"] / n, device.busy_unit_ns["write"] / n, credit


def ssd_energy_j(devices, reading_a, reading_b, dur_s: float) -> float:
    """SSD energy over ``dur_s``: idle power plus (active - idle) x the share of time its ceiling
    stage was busy, minus the APST credit, from the devices' :func:`ssd_reading` at the start
    (``reading_a``) and end."""
    energy = 0.0
    for d, (r0, w0, c0), (r1, w1, c1) in zip(devices, reading_a, reading_b):
        c = d.cfg
        energy += c.idle_w * dur_s
        energy += (c.active_read_w - c.idle_w) * (r1 - r0) * 1e-9
        energy += (c.active_write_w - c.idle_w) * (w1 - w0) * 1e-9
        energy -= c1 - c0
    return energy
