"""fio's own ``examples/`` job files, run unchanged for 20 ms each (``--set runtime=20ms time_based=1``).

The files are fio's (GPL-2.0): never in this repository. ``.ci/run`` fetches Debian's ``fio-examples``
package into a cache keyed by its version and points ``FIO_EXAMPLES_DIR`` at its
``usr/share/doc/fio/examples``: 3.41-2 (fio 3.41's 99 job files) from Debian's pool by its URL, else the
distribution's own through ``apt-get download fio-examples`` (bookworm: fio 3.33's 86); without either
(no network, another distribution) the test is skipped with the reason. The release is read from the
files present (:data:`RELEASES`: 3.41's set has ``sprandom.fio``, new in fio 3.41), and so is how many
must run (:data:`MIN_RUN`).

Each example runs on the machine it needs, as fio runs on a machine that has it (:data:`NEEDS`): the
zoned ones on the ZNS platform with the 256 MiB zones and the open-zone limit fio's zbd examples were
written for (an SMR disk's), the NUMA one on a two-socket host, butterfly.fio on an existing 1 GiB
file (fio takes an existing file's size), uring-cmd-fdp.fio on the PM1743 with flexible data
placement (the pm1743-gc preset's 8 reclaim unit handles), the protection-information ones on a
namespace formatted with 64 bytes of metadata per 4 KiB block (extended LBAs or a separate buffer)
and Type 1 protection,
atomic-verify.fio on Linux 6.11 (RWF_ATOMIC) and an SSD whose atomic write unit holds its 4 KiB
blocks. A refusal is either *permanent*, an engine of :data:`PERMANENT_ENGINES` (network, GPU, RDMA,
object stores, persistent memory, SCSI, another program) or a device that is not an NVMe SSD
(:data:`PERMANENT`), one fio makes too (:data:`FIO_REFUSES`), or a known gap of :data:`GAPS` with
its reason; any other refusal, or a crash, fails the test.
"""

from __future__ import annotations

import os
import re
import tempfile
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
#: the PM1743 with its FTL and flexible data placement (the pm1743-gc preset: 8 reclaim unit handles;
#: uring-cmd-fdp.fio: "at least 8 available reclaim units"), on the platform `stacksim platform new
#: --cpu xeon-silver-4210r --ssd pm1743-gc` makes (Linux 6.6: io_uring_cmd needs 5.19)
_FDP = ("new:xeon-silver-4210r:pm1743-gc", {})
#: a namespace of 4 KiB blocks with 64 bytes of metadata each and Type 1 protection information
_PI = {"ssd.namespace.lba_data_bytes": "4096", "ssd.namespace.metadata_bytes": "64", "ssd.namespace.pi_type": "1"}
#: example -> (platform, extra --set keys): the machine it needs
NEEDS: dict[str, tuple[str, dict[str, str]]] = {
    "zbd-rand-write.fio": _ZONED,
    "zbd-seq-read.fio": _ZONED,
    "zbd-rand-write-trim-gc.fio": _ZONED,
    "zbd-rand-write-zone-reset-gc.fio": _ZONED,
    "uring-cmd-zoned.fio": _ZONED,
    "xnvme-zoned.fio": _ZONED,
    "numa.fio": ("cheops23-optane", {}),
    "butterfly.fio": (PLATFORM, {"size": "1g"}),
    "uring-cmd-fdp.fio": _FDP,
    # (not in fio 3.41's examples; for a release that ships them: write_mode's Write Zeroes, Write
    # Uncorrectable and Verify on the FTL's flash, its zone_append on the zoned namespace)
    "uring-cmd-write-mode.fio": _FDP,
    "uring-cmd-zoned-append.fio": _ZONED,
    "uring-cmd-pi-ext.fio": (PLATFORM, {**_PI, "ssd.namespace.extended_lba": "1"}),
    "uring-cmd-pi-sb.fio": (PLATFORM, _PI),
    "atomic-verify.fio": (PLATFORM, {"kernel.version": "6.11", "ssd.namespace.atomic_write_unit_bytes": "16384"}),
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
#: examples refused for what they reach, which is not an NVMe SSD: file -> a fragment of the refusal
PERMANENT: dict[str, str] = {
    "libblkio-virtio-blk-vfio-pci.fio": "virtio-blk device",
}
#: examples refused for a gap stacksim may close: file -> a fragment of the refusal
GAPS: dict[str, str] = {}
#: examples fio refuses too, run as they are: file -> a fragment of the refusal. The [override] section
#: of xnvme-compare.fio, xnvme-zoned.fio and xnvme-fdp.fio reads rw=${FIO_RW}: empty without the
#: variable (fio's options.c fio_option_dup_subs: an undefined variable expands to the empty string),
#: and fio rejects the empty rw (no value of rw matches it, parse.c __handle_option; the job is
#: dropped); the files are meant to be run with --section=default and the engine options on fio's
#: command line. xnvme-pi.fio names no ioengine, so fio's default psync (os/os.h FIO_PREFERRED_ENGINE)
#: parses it, which has no md_per_io_size option: "Bad option <md_per_io_size=64>" (options.c
#: fio_options_parse). sprandom.fio's bs=${FIO_BS}: the empty string fio substitutes fails
#: str_to_decimal, fio logs "failed parsing" and drops the section
FIO_REFUSES: dict[str, str] = {
    "xnvme-compare.fio": "'rw' needs a value",
    "xnvme-zoned.fio": "'rw' needs a value",
    "xnvme-fdp.fio": "'rw' needs a value",
    "xnvme-pi.fio": "Bad option <md_per_io_size=64>",
    "sprandom.fio": "fio: failed parsing bs=${FIO_BS}",
}
#: fio releases whose examples the test knows, newest first: (release, a file new in it (None: the
#: oldest), how many of its examples must run, how many are not refused permanently)
RELEASES: tuple[tuple[str, str | None, int, int], ...] = (
    ("3.41", "sprandom.fio", 57, 62),
    ("3.33", None, 44, 48),
)
RELEASE, _MARKER, MIN_RUN, CEILING = next(r for r in RELEASES if r[1] is None or (EXAMPLES / r[1]).is_file())
#: worker processes (the examples are independent runs; CI has 2 cores)
WORKERS = min(2, os.cpu_count() or 1)
_ENGINE = re.compile(r"ioengine '([^']+)' is not modelled")


def _platform(name: str) -> str:
    """A built-in platform's name, or ``new:CPU:SSD``: the platform file `stacksim platform new`
    composes from those presets (written once per worker process)."""
    if not name.startswith("new:"):
        return name
    _, cpu, ssd = name.split(":")
    path = Path(tempfile.gettempdir()) / f"stacksim-examples-{os.getpid()}-{cpu}-{ssd}.yaml"
    if not path.is_file():
        from models.platforms import compose_platform
        from scenarios.config.platform_file import platform_yaml

        platform, _ = compose_platform(cpu, 1, ssd, 1)
        path.write_text(platform_yaml(platform, header=f"platform new --cpu {cpu} --ssd {ssd}"))
    return str(path)


def _run(path: Path) -> tuple[str, str]:
    """('run', '') or ('refused', the message) for one example; a crash raises."""
    platform, sets = NEEDS.get(path.name, (PLATFORM, {}))
    platform = _platform(platform)
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
        elif path.name in PERMANENT and PERMANENT[path.name] in msg:
            by_reason[f"permanent: {PERMANENT[path.name]}"].append(path.name)
        elif path.name in FIO_REFUSES and FIO_REFUSES[path.name] in msg:
            by_reason[f"fio refuses too: {FIO_REFUSES[path.name]}"].append(path.name)
        elif path.name in GAPS and GAPS[path.name] in msg:
            by_reason[f"gap: {GAPS[path.name]}"].append(path.name)
        else:
            wrong.append(f"{path.name}: {msg}")
    with capsys.disabled():
        print(
            f"\nfio {RELEASE}'s {len(FILES)} examples: {len(runs)} run ({time.monotonic() - t0:.0f} s), of {CEILING}"
            " not refused permanently; refused:"
        )
        for reason, names in sorted(by_reason.items()):
            print(f"  {reason}: {', '.join(names)}")
    assert not wrong, "refused for a reason neither permanent nor a known gap:\n" + "\n".join(wrong)
    permanent = sum(len(names) for reason, names in by_reason.items() if reason.startswith("permanent"))
    assert len(FILES) - permanent == CEILING, (len(FILES), permanent, CEILING)
    assert len(runs) >= MIN_RUN, runs
