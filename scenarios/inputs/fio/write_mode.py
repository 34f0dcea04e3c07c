"""fio's io_uring_cmd ``write_mode``: the NVM command its writes are sent as (engines/io_uring.c
and engines/nvme.c's ``fio_nvme_uring_cmd_prep``, which sets the command's opcode; the HOWTO of
fio 3.42):

* ``write`` (the default): Write; ``uncor``: Write Uncorrectable; ``zeroes``: Write Zeroes;
  ``verify``: Verify; ``zone_append``: Zone Append, which "requires zonemode=zbd";
* a mix, ``mode/pct:mode/pct:...``: each write picks its mode at random by the percentages, which
  "must sum to 100"; a mode without a percentage takes an even share of what the others leave
  (``write/50:zeroes/:uncor/`` is 50, 25, 25).

Each stays a write for fio (its direction, counted in the write statistics); only the command
differs (what the device does with it: :mod:`models.ssd.nvm_commands`). ``cmd_type=bsg`` (SCSI)
is not modelled, so neither are its VERIFY options.
"""

from __future__ import annotations

from typing import Any

from models.os.kernel_version import parse_version
from simcore.errors import ConfigError

#: write_mode's values (fio's HOWTO)
MODES = ("write", "uncor", "zeroes", "verify", "zone_append")


def parse_write_mode(text: str | None) -> tuple[tuple[str, float], ...]:
    """``write_mode``'s value: (mode, percent) pairs; () for plain ``write``."""
    val = (text or "").strip().lower()
    parts = [p.strip() for p in val.split(":")]
    out: list[tuple[str, float | None]] = []
    for part in parts:
        mode, sep, pct_s = part.partition("/")
        mode = mode.strip()
        if mode not in MODES:
            raise ConfigError(f"option 'write_mode': unknown mode '{mode}' (allowed: {', '.join(MODES)})")
        if any(m == mode for m, _ in out):
            raise ConfigError(f"option 'write_mode': mode '{mode}' is given twice")
        pct: float | None = None
        if sep and pct_s.strip():
            try:
                pct = float(pct_s.strip())
            except ValueError:
                raise ConfigError(f"option 'write_mode': '{pct_s.strip()}' is not a percentage") from None
            if not 0.0 <= pct <= 100.0:
                raise ConfigError(f"option 'write_mode': {pct:g}% is outside 0..100")
        elif len(parts) == 1:
            pct = 100.0
        out.append((mode, pct))
    given = sum(p for _, p in out if p is not None)
    free = [m for m, p in out if p is None]
    if free:
        if given > 100.0:
            raise ConfigError(f"option 'write_mode': the percentages add up to {given:g}, more than 100")
        share = (100.0 - given) / len(free)
        out = [(m, share if p is None else p) for m, p in out]
    elif abs(given - 100.0) > 1e-9:
        raise ConfigError(f"option 'write_mode': the percentages must sum to 100 (they add up to {given:g})")
    modes = tuple((m, float(p)) for m, p in out if p)
    return () if modes == (("write", 100.0),) else modes


def _write_mode(st: dict[str, Any], v: str | None, kb: int) -> None:
    st["write_mode"] = parse_write_mode(v)


HANDLERS = {"write_mode": _write_mode}


def check_write_mode(state: dict[str, Any], last: dict, fail) -> None:
    """zone_append needs zonemode=zbd (fio's HOWTO); fio 3.41 knows neither it nor mixes (its man
    page lists write, uncor, zeroes and verify: they came after it, with the HOWTO of 3.42)."""
    modes = state["write_mode"]
    if any(m == "zone_append" for m, _ in modes) and state["zonemode"] != "zbd":
        raise fail("option 'write_mode=zone_append' requires zonemode=zbd", last.get("write_mode"))
    newer = len(modes) > 1 or any(m == "zone_append" for m, _ in modes)
    if newer and parse_version(state["stacksim_fio_version"], "stacksim_fio_version") < (3, 42):
        raise fail(
            f"option 'write_mode': fio {state['stacksim_fio_version']} has no zone_append mode nor mixes"
            " (fio 3.41's are write, uncor, zeroes, verify)",
            last.get("write_mode"),
        )
