"""fio's own ``examples/`` job files, run unchanged for 20 ms each (``--set runtime=20ms time_based=1``).

The files are fio's (GPL-2.0): never in this repository. ``.ci/run`` fetches Debian's ``fio-examples``
package (fio 3.33's 86 job files: ``apt-get download fio-examples && dpkg-deb -x``) into a cache and
points ``FIO_EXAMPLES_DIR`` at its ``usr/share/doc/fio/examples``; without it (no network, another
distribution) the test is skipped with the reason.

Each example runs on the machine it needs, as fio runs on a machine that has it: the zoned ones on
the ZNS platform with the 256 MiB zones and the open-zone limit fio's zbd examples were written for
(an SMR disk's), the NUMA one on a two-socket host, butterfly.fio on an existing 1 GiB file (fio takes
an existing file's size). A refusal is either *permanent*, an engine of :data:`PERMANENT_ENGINES`
(network, GPU, RDMA, object stores, persistent memory, SCSI, another program), one fio makes too
(:data:`FIO_REFUSES`), or a known gap of :data:`GAPS` with its reason; any other refusal, or a
crash, fails the test. The ceiling with those engines refused: 48 of the 86.
"""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

EXAMPLES = Path(os.environ.get("FIO_EXAMPLES_DIR", "/nonexistent"))
FILES = sorted(EXAMPLES.glob("*.fio"))
PLATFORM = "optane900p-e3-1230v5"
RUN = {"runtime": "20ms", "time_based": "1"}
_ZONED = (
    "zn540-e5-2660v4",
    {
        "ssd.zoned.zone_size_bytes": str(256 << 20),
        "ssd.zoned.zone_capacity_bytes": str(256 << 20),
        "ssd.zoned.max_open_zones": "128",
        "ssd.zoned.max_active_zones": "128",
    },
)
#: example -> (platform, extra --set keys): the machine it needs
NEEDS: dict[str, tuple[str, dict[str, str]]] = {
    "zbd-rand-write.fio": _ZONED,
    "zbd-seq-read.fio": _ZONED,
    "uring-cmd-zoned.fio": _ZONED,
    "xnvme-zoned.fio": _ZONED,
    "numa.fio": ("cheops23-optane", {}),
    "butterfly.fio": (PLATFORM, {"size": "1g"}),
}
#: engines refused on purpose: their IO does not reach a modelled host path to an NVMe SSD
PERMANENT_ENGINES = frozenset(
    {
        "net",  # network
        "rdma",
        "librpma_apm_client",
        "librpma_apm_server",
        "librpma_gpspm_client",
        "librpma_gpspm_server",
        "nbd",
        "libiscsi",
        "http",  # object stores and distributed file systems
        "nfs",
        "rados",
        "rbd",
        "dfs",
        "gfapi",
        "libhdfs",
        "ime_psync",
        "libcufile",  # GPU
        "dev-dax",  # persistent memory
        "libpmem",
        "pmemblk",
        "sg",  # SCSI
        "libzbc",
        "mtd",  # raw flash
        "exec",  # another program
        "e4defrag",  # ext4's extent moves: device IO inside the file system, not modelled
    }
)
#: examples refused for a gap stacksim may close: file -> a fragment of the refusal
GAPS: dict[str, str] = {
    "cross-stripe-verify.fio": "io_size other than size",  # (and loops=2 with verify, 30 x 124 GiB offsets)
    "enospc-pressure.fio": "randtrim",  # trims on a file with libaio (punch holes); also verify_async=4
}
#: examples fio 3.33 refuses too, run as they are: file -> a fragment of the refusal. xnvme-*.fio's
#: [override] section reads rw=${FIO_RW}: empty without the variable (fio's HOWTO: an undefined
#: variable expands to the empty string), and fio rejects the empty rw too (no value of rw matches it,
#: parse.c); the files are meant to
#: be run with --section=default and the engine options on fio's command line
FIO_REFUSES: dict[str, str] = {
    "xnvme-compare.fio": "'rw' needs a value",
    "xnvme-zoned.fio": "'rw' needs a value",
}
#: at least this many of fio 3.33's 86 examples run
MIN_RUN = 44
#: worker processes (the examples are independent runs; CI has 2 cores)
WORKERS = min(2, os.cpu_count() or 1)
_ENGINE = re.compile(r"ioengine '([^']+)' is not modelled")


def _run(path: Path) -> tuple[str, str]:
    """('run', '') or ('refused', the message) for one example; a crash raises."""
    platform, sets = NEEDS.get(path.name, (PLATFORM, {}))
    try:
        cfg = resolve(job_file=str(path), platform=platform, sets={**RUN, **sets})
    except ConfigError as e:
        return "refused", str(e)
    simulate(cfg)
    return "run", ""


@pytest.mark.skipif(
    not FILES, reason="FIO_EXAMPLES_DIR is not set to fio's examples/ (.ci/run fetches Debian's fio-examples)"
)
def test_fio_examples_run_unchanged(capsys):
    runs, by_reason, wrong = [], defaultdict(list), []
    t0 = time.monotonic()
    with ProcessPoolExecutor(WORKERS) as pool:  # (a crash in a worker is raised here)
        results = list(pool.map(_run, FILES))
    for path, (status, msg) in zip(FILES, results):
        if status == "run":
            runs.append(path.name)
            continue
        m = _ENGINE.search(msg)
        if m and m[1] in PERMANENT_ENGINES:
            by_reason[f"permanent: ioengine={m[1]}"].append(path.name)
        elif path.name in FIO_REFUSES and FIO_REFUSES[path.name] in msg:
            by_reason[f"fio refuses too: {FIO_REFUSES[path.name]}"].append(path.name)
        elif path.name in GAPS and GAPS[path.name] in msg:
            by_reason[f"gap: {GAPS[path.name]}"].append(path.name)
        else:
            wrong.append(f"{path.name}: {msg}")
    with capsys.disabled():
        print(f"\nfio {len(FILES)} examples: {len(runs)} run ({time.monotonic() - t0:.0f} s); refused:")
        for reason, names in sorted(by_reason.items()):
            print(f"  {reason}: {', '.join(names)}")
    assert not wrong, "refused for a reason neither permanent nor a known gap:\n" + "\n".join(wrong)
    assert len(runs) >= MIN_RUN, runs
