"""The preset catalogue: every value names its source, every preset simulates, the SSD presets
reproduce their datasheet figures, and ``stacksim platform new`` composes loadable platforms."""

import pytest

from models.cpu.presets import CPU_CATALOGUE
from models.platforms import compose_platform
from models.ssd.presets import DATASHEET_DEPTH, SSD_CATALOGUE
from scenarios.config.platform_file import load_platform
from scenarios.run.simulate import simulate
from simcore.sources import kind_of, unsourced
from stacksim.cli import main
from tests.conftest import make_cfg
from tests.test_device import _closed_loop

PRESETS = [("cpu", n) for n in CPU_CATALOGUE] + [("ssd", n) for n in SSD_CATALOGUE]


@pytest.mark.parametrize("kind,name", PRESETS)
def test_every_value_a_preset_sets_names_its_source(kind, name):
    """A value that differs from the model's default has a source, and every source (of a value or
    of a fact) says how sure it is: exact, derived, recalled or estimate."""
    preset = (CPU_CATALOGUE if kind == "cpu" else SSD_CATALOGUE)[name]
    config = preset.make()
    assert unsourced(config, preset.sources) == []
    vague = [k for k, s in preset.sources.items() if not kind_of(s)]
    vague += [k for k, (_, s) in preset.facts.items() if not kind_of(s)]
    assert vague == []
    fields = set(type(config).model_fields)
    assert {k.split(".")[0] for k in preset.sources} <= fields  # no source of a field that does not exist


def _short_run(platform, runtime_ms=2, **extra):
    cfg = make_cfg(platform=platform, runtime_ms=runtime_ms, ramp_ms=0, extra=extra or None)
    return simulate(cfg).summary


@pytest.mark.parametrize("name", list(CPU_CATALOGUE))
def test_every_cpu_preset_runs(name):
    """One socket of each CPU preset with a P4800X: IOs complete, the CPU draws power, and its
    idle states are the preset's (a thread sleeping between IOs visits them)."""
    platform, _ = compose_platform(name, 1, "optane-p4800x", 1)
    s = _short_run(platform)
    assert s["ios"] > 50 and s["power_w"]["cpu"] > 0
    names = {st.name for st in platform.cpu.cstates}
    assert set(s["cstate_residency"]["cpu0"]) == names | {"C0"}


@pytest.mark.parametrize("name", [n for n in SSD_CATALOGUE if n not in ("optane-p4800x",)])
def test_every_ssd_preset_runs(name):
    """Each SSD preset behind a Silver 4210R: a depth-1 read takes at least the device's own time."""
    platform, _ = compose_platform("xeon-silver-4210r", 1, name, 1)
    s = _short_run(platform, runtime_ms=5)
    ssd = platform.ssd
    floor = (ssd.fetch_ns + ssd.read.base_ns + ssd.post_ns) / 1e3
    assert s["ios"] > 10 and s["latency_us"]["mean"] > floor * 0.9


#: datasheet figures, as the presets' sources quote them: QD1 4 KiB random-read latency (us; the
#: 980 PRO's from its QD1 22K IOPS) and 4 KiB random-read IOPS "up to"
DATASHEET_QD1_US = {"optane-p5800x": 5.0, "samsung-980pro": 45.45, "kioxia-cm6": 90.0, "micron-7450": 75.0}
DATASHEET_READ_IOPS = {"optane-p5800x": 1.5e6, "samsung-980pro": 1.0e6, "kioxia-cm6": 1.4e6, "kioxia-cm7": 2.7e6}
DATASHEET_WRITE_IOPS = {"samsung-980pro": 1.0e6, "samsung-pm1733": 135e3, "micron-7450": 180e3}
#: the client presets, whose read ratings are a fresh drive's inside the SLC cache (pSLC reads)
RATED_IN_SLC = ("samsung-980pro", "samsung-990pro", "wd-sn850x")


def _as_rated(name):
    """The preset in its datasheet's state: a client drive's data in its SLC cache (the presets
    model the filled drive), an enterprise drive as it is."""
    cfg = SSD_CATALOGUE[name].make()
    if name in RATED_IN_SLC:
        cfg = cfg.model_copy(update={"media": cfg.media.model_copy(update={"reads_from_slc": True})})
    return cfg


@pytest.mark.parametrize("name", list(DATASHEET_QD1_US))
def test_ssd_presets_reproduce_their_datasheet_qd1_latency(name):
    """The device alone (doorbell to completion entry) at depth 1, in the datasheet's state: within
    3% of the datasheet's latency (the lognormal spread keeps the mean; fetch, transfer and post add
    up to it)."""
    mean_ns, _ = _closed_loop(_as_rated(name), "read", 1, 400, device_seed=2, address_seed=2)
    assert mean_ns / 1e3 == pytest.approx(DATASHEET_QD1_US[name], rel=0.03)


def test_a_filled_client_drive_reads_slower_than_its_fresh_rating():
    """The 980 PRO filled (the preset as it is): its reads take the TLC page types' mean tR (34.0 us)
    where the rating's took pSLC's (30 us), so a QD1 read is 4 us longer than the data sheet's and
    the random-read ceiling at the rating's depth falls by the die count's share (37 dies derived
    from pSLC reads, each busy 38.6 us on TLC instead of 34.7)."""
    filled = SSD_CATALOGUE["samsung-980pro"].make()
    mean_ns, _ = _closed_loop(filled, "read", 1, 400, device_seed=2, address_seed=2)
    assert mean_ns / 1e3 == pytest.approx(45.45 + 3.96, rel=0.03)
    _, iops = _closed_loop(filled, "read", DATASHEET_DEPTH, 12_000, device_seed=3, address_seed=3)
    assert iops == pytest.approx(1.0e6 * 34_683 / 38_647, rel=0.06)
    assert iops < 0.94 * DATASHEET_READ_IOPS["samsung-980pro"]


@pytest.mark.parametrize("name", list(DATASHEET_READ_IOPS))
def test_ssd_presets_reproduce_their_datasheet_random_read_iops(name):
    """Random 4 KiB reads kept at the datasheets' depth (512 in flight), device alone, in the
    datasheet's state: within 6% of the datasheet's figure; at depth 32 the units' collisions keep
    them well below it."""
    cfg = _as_rated(name)
    _, iops = _closed_loop(cfg, "read", DATASHEET_DEPTH, 12_000, device_seed=3, address_seed=3)
    assert iops == pytest.approx(DATASHEET_READ_IOPS[name], rel=0.06)
    if cfg.parallel_units > 32:
        _, shallow = _closed_loop(cfg, "read", 32, 4_000, device_seed=3, address_seed=3)
        assert shallow < 0.6 * iops


@pytest.mark.parametrize("name", list(DATASHEET_WRITE_IOPS))
def test_ssd_presets_reproduce_their_datasheet_random_write_iops(name):
    """Sustained random 4 KiB writes (the write buffer's flushes bound them, once it is full): within
    10% (the run's first writes fill the buffer without waiting)."""
    _, iops = _closed_loop(SSD_CATALOGUE[name].make(), "write", DATASHEET_DEPTH, 40_000, device_seed=4, address_seed=4)
    assert iops == pytest.approx(DATASHEET_WRITE_IOPS[name], rel=0.1)


def test_large_reads_run_at_the_datasheet_sequential_rate():
    """128 KiB reads at depth 32 on the 980 PRO: the data path's 7.0 GB/s (datasheet), not the link's 7.5."""
    platform, _ = compose_platform("xeon-silver-4210r", 1, "samsung-980pro", 1)
    s = _short_run(platform, bs="128k", rw="read", ioengine="io_uring", iodepth="32", numjobs="1", hipri="0")
    assert s["bandwidth_mb_s"] == pytest.approx(7000, rel=0.05)


def test_platform_new_round_trip(tmp_path, capsys):
    """`stacksim platform new` writes a file that loads back as the composed platform and runs."""
    out = tmp_path / "mine.yaml"
    argv = ["platform", "new", "--cpu", "xeon-gold-6248r", "--sockets", "2", "--ssd", "samsung-980pro"]
    assert main([*argv, "--ssds", "4", "--kernel", "5.15", "-o", str(out)]) == 0
    loaded = load_platform(str(out))
    composed, sources = compose_platform("xeon-gold-6248r", 2, "samsung-980pro", 4, "5.15")
    assert loaded == composed
    assert loaded.cpu.logical_cpus == 96 and loaded.ssd_nodes == (0, 0, 1, 1) and loaded.kernel.version == "5.15"
    text = out.read_text()
    assert "skx_cstates" in text
    assert all(f"#   {key}:" in text for key in sources)
    capsys.readouterr()
    assert main(["run", "--platform", str(out), "--set", "runtime=2ms", "--set", "ramp_time=0", "--quiet"]) == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["--cpu", "xeon-gold-6248", "--ssd", "samsung-980pro"], "did you mean xeon-gold-6248r"),
        (["--cpu", "epyc-7763", "--ssd", "980pro"], "did you mean samsung-980pro"),
        (["--cpu", "core-i9-12900k", "--sockets", "2", "--ssd", "wd-sn850x"], "a single-socket part"),
        (["--cpu", "epyc-7763", "--sockets", "0", "--ssd", "wd-sn850x"], "made for 1 to 2 sockets"),
        (["--cpu", "epyc-7763", "--ssd", "wd-sn850x", "--ssds", "0"], "--ssds 0: expected 1 to 1024"),
        (["--cpu", "epyc-7763", "--ssd", "wd-sn850x", "--kernel", "six"], "--kernel"),
    ],
)
def test_platform_new_refuses_bad_names_and_counts(tmp_path, capsys, args, message):
    out = tmp_path / "bad.yaml"
    assert main(["platform", "new", *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_list_shows_each_preset_and_its_sources(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    cpus = out.split("CPU presets", 1)[1].split("SSD presets", 1)[0]
    assert all(f"  {name} " in cpus for name in CPU_CATALOGUE)
    assert main(["list", "xeon-gold-6248r"]) == 0
    out = capsys.readouterr().out
    assert (
        "CPU preset" in out and "C6 133/600 us" in out and "exact: Linux drivers/idle/intel_idle.c, skx_cstates" in out
    )
    assert main(["list", "kioxia-cm6"]) == 0
    out = capsys.readouterr().out
    assert "parallel_units" in out and "Little's law" in out and "(channels)" in out


def test_list_presets_says_which_device_model_each_ssd_preset_uses(capsys):
    """``stacksim list presets``: 3D XPoint presets read their media for every read; every NAND
    preset has the controller's read-ahead and (but the ZN540) a DRAM write buffer, the client ones an SLC
    cache; the GC variant names its FTL; the ZN540 is zoned."""
    from stacksim.cli import main

    assert main(["list", "presets"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    from models.ssd.presets import SSD_CATALOGUE

    assert set(rows) == set(SSD_CATALOGUE)
    for name, line in rows.items():
        xpoint = "3D XPoint" in line
        assert ("no read-ahead" in line) == xpoint, line
    assert "FTL + GC" in rows["pm1743-gc"] and "FTL + GC" not in rows["pm1743"]
    assert "FDP (8 reclaim unit handles)" in rows["pm1743-gc"] and "FDP" not in rows["samsung-980pro"]
    assert "zoned" in rows["zn540"]
    # the DRAM write buffer on every NAND preset (the zoned one's too), the SLC cache on the client drives
    for name, line in rows.items():
        assert ("DRAM write buffer" in line) == ("3D XPoint" not in line), line
        assert ("SLC cache" in line) == (name in ("samsung-980pro", "samsung-990pro", "wd-sn850x")), line
    assert "SLC cache 42 GB then 2 GB/s" in rows["samsung-980pro"]
    # which media model: NAND dies and channels, or a service time per command (3D XPoint, the ZN540's fit)
    for name, line in rows.items():
        nand = SSD_CATALOGUE[name].make().media is not None
        assert ("NAND media:" in line) == nand and ("a service time per command" in line) == (not nand), line
    assert "NAND media: 37 dies on 8 channels, TLC page types" in rows["samsung-980pro"]
