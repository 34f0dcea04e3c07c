"""The FTL's steady precondition and greedy GC's analytic write amplification
(models/ssd/gc_analytic.py, models/ssd/ftl.py): the write amplification the FTL counts (pages it
programmed / pages the host wrote) under uniform random 4 KiB writes matches the analytic greedy
figure for its over-provisioning; the analytic steady state is the state the simulated overwrites
converge to, so a steady drive shows it from the first writes; sequential overwrite costs nothing;
the state is deterministic."""

import math
from pathlib import Path

import numpy as np
import pytest

from models.ssd.config import FtlConfig
from models.ssd.ftl import CLOSED, FREE, Ftl
from models.ssd.gc_analytic import greedy_mean_field, greedy_wa_limit, steady_valid_counts, victim_valid_fraction
from models.ssd.presets import pm1743_gc, samsung_980pro
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from stacksim.cli import main
from tests.conftest import make_cfg

ROOT = Path(__file__).resolve().parents[1]
PAGE = 4096


def ftl(span_mib: int, ppb: int, spare: float, precondition: str, rng=None) -> Ftl:
    cfg = FtlConfig(
        enabled=True, span_bytes=span_mib << 20, pages_per_block=ppb, spare_fraction=spare, precondition=precondition
    )
    return Ftl(cfg, None, rng)


def random_writes(f: Ftl, n: int, seed: int) -> float:
    """``n`` uniform random 4 KiB overwrites; the write amplification the FTL counted over them."""
    h0, n0 = f.host_pages, f.nand_pages
    for lpn in np.random.default_rng(seed).integers(0, f.n_lpn, n).tolist():
        f.write(lpn * PAGE, PAGE, 0)
    return (f.nand_pages - n0) / (f.host_pages - h0)


# -- the analytic figures -------------------------------------------------------------------------


def test_the_lambert_form_solves_the_fifo_fixed_point_and_meets_the_published_point():
    for spare in (0.05, 0.075, 0.28, 1.0, 3.0):
        u = victim_valid_fraction(spare)
        assert 0 < u < 1 and math.isclose(u, math.exp(-(1 + spare) * (1 - u)), rel_tol=1e-9)
    # Xiang and Kurkoski (arXiv:1110.4245), abstract: greedy at spare factor 0.3, 2.36 (their simulation 2.35)
    assert greedy_wa_limit(0.3) == pytest.approx(2.36, abs=0.01)
    assert greedy_wa_limit(0.075) > greedy_wa_limit(0.28) > greedy_wa_limit(1.0) > 1.0


@pytest.mark.parametrize("spare", [0.07, 0.28, 1.0])
def test_the_mean_field_is_a_distribution_of_the_user_pages_and_tends_to_the_limit(spare):
    was = []
    for b in (16, 64, 256, 4096):
        st = greedy_mean_field(spare, b)
        assert math.isclose(sum(st.share), 1.0, rel_tol=1e-9)
        # the blocks hold the user pages: sum of j x share_j = U / N = b / (1 + spare)
        assert math.isclose(sum(j * x for j, x in enumerate(st.share)), b / (1 + spare), rel_tol=1e-9)
        assert all(x == 0 for x in st.share[: math.floor(st.victim_valid)])  # nothing below the victims
        was.append(st.write_amplification)
    assert was == sorted(was)  # larger blocks, less choice for greedy: more amplification ...
    assert was[-1] == pytest.approx(greedy_wa_limit(spare), rel=0.005)  # ... up to the large-block limit


def test_steady_counts_sum_to_the_user_pages_and_refuse_a_space_without_room():
    counts = steady_valid_counts(10_000, 170, 64)
    assert sum(counts) == 10_000 and max(counts) <= 64 and counts == sorted(counts, reverse=True)
    with pytest.raises(ValueError, match="cannot hold"):
        steady_valid_counts(6400, 100, 64)


# -- the steady state -----------------------------------------------------------------------------


def test_the_steady_state_is_a_consistent_map():
    f = ftl(32, 64, 0.07, "steady")
    l2p, p2l = f.l2p, f.p2l
    assert sorted(l2p) == [ppn for ppn, lpn in enumerate(p2l) if lpn >= 0]  # the physical pages used ...
    assert all(p2l[ppn] == lpn for lpn, ppn in enumerate(l2p))  # ... each holding its own logical page
    assert len(set(l2p)) == f.n_lpn and min(l2p) >= 0
    per_block = [sum(1 for p in p2l[b * f.ppb : (b + 1) * f.ppb] if p >= 0) for b in range(f.n_blocks)]
    assert per_block == f.valid and sum(f.valid) == f.n_lpn
    assert len(f.free) == f.cfg.gc_free_blocks + 1 and not f.open
    assert all(f.state[b] == FREE for b in f.free)
    assert f.state.count(CLOSED) == f.data_blocks


@pytest.mark.parametrize("spare", [0.07, 0.28])
def test_random_overwrite_converges_to_the_analytic_steady_state(spare):
    """A full drive overwritten at random four times over settles where the steady precondition
    starts: the same write amplification and the same profile of valid pages per block."""
    full, steady = ftl(32, 32, spare, "full"), ftl(32, 32, spare, "steady")
    random_writes(full, 4 * full.n_lpn, seed=1)
    wa_full, wa_steady = random_writes(full, full.n_lpn, seed=2), random_writes(steady, full.n_lpn, seed=2)
    assert wa_steady == pytest.approx(wa_full, rel=0.03)
    prof = [sorted(v for v, s in zip(f.valid, f.state) if s == CLOSED) for f in (full, steady)]
    m = min(map(len, prof))
    assert np.mean(np.abs(np.subtract(prof[0][-m:], prof[1][-m:]))) < 1.0  # pages, of 32 per block


@pytest.mark.parametrize("spare", [0.07, 0.28])
def test_random_4k_writes_meet_the_analytic_greedy_figure(spare):
    """256-page blocks (the default) on a 512 MiB span: the FTL's counted write amplification is
    within 5% of the mean-field figure and 10% of the large-block limit, at the spare factor GC
    works with (``data_spare``: ``spare_fraction`` less the free blocks GC keeps)."""
    f = ftl(512, 256, spare, "steady")
    wa = random_writes(f, f.n_lpn // 2, seed=3)
    assert f.data_spare == pytest.approx(spare, abs=0.01)
    assert wa == pytest.approx(greedy_mean_field(f.data_spare, 256).write_amplification, rel=0.05)
    assert wa == pytest.approx(greedy_wa_limit(f.data_spare), rel=0.10)
    assert wa == pytest.approx(greedy_wa_limit(spare), rel=0.10)  # and at the configured spare factor


def test_the_pm1743_gc_preset_at_steady_state_meets_its_documented_figure():
    """pm1743-gc's FTL (1 GiB span, 256-page blocks, 14.5% spare): its program time was derived
    from a write amplification of 4.15 measured on the model after a long fill (docs/zoned-fdp.md);
    the steady drive counts it from the start, and the mean field gives the same."""
    cfg = pm1743_gc().ftl.model_copy(update={"precondition": "steady"})
    f = Ftl(cfg, pm1743_gc().capacity_bytes)
    wa = random_writes(f, f.n_lpn // 4, seed=6)
    assert greedy_mean_field(f.data_spare, f.ppb).write_amplification == pytest.approx(4.15, abs=0.01)
    assert wa == pytest.approx(4.15, rel=0.03)


@pytest.mark.parametrize("spare", [0.07, 0.28])
def test_a_steady_drive_shows_the_steady_figure_from_its_first_writes(spare):
    """The first 5% of the span's worth of writes: a steady drive already at the figure, a full
    one far from it (its spare blocks absorb them; it needs the overwrites the steady state saves)."""
    figure = {}
    for pre in ("steady", "full"):
        f = ftl(128, 64, spare, pre)
        figure[pre] = random_writes(f, f.n_lpn // 20, seed=4)
    target = greedy_mean_field(ftl(128, 64, spare, "empty").data_spare, 64).write_amplification
    assert figure["steady"] == pytest.approx(target, rel=0.05)
    assert figure["full"] < 0.6 * target


def test_sequential_overwrite_of_a_steady_drive_settles_at_no_amplification():
    f = ftl(32, 64, 0.07, "steady")
    passes = []
    for _ in range(2):
        h0, n0 = f.host_pages, f.nand_pages
        for lpn in range(f.n_lpn):
            f.write(lpn * PAGE, PAGE, 0)
        passes.append((f.nand_pages - n0) / (f.host_pages - h0))
    # the first pass still collects blocks of scattered pages; once every page is rewritten in order
    # each block dies whole
    assert passes[0] > 1.5 and passes[1] == 1.0


def test_the_steady_state_is_deterministic_per_stream():
    a, b = (ftl(32, 64, 0.07, "steady", np.random.default_rng(7)) for _ in range(2))
    c = ftl(32, 64, 0.07, "steady", np.random.default_rng(8))
    assert a.l2p == b.l2p and a.valid == b.valid
    assert a.l2p != c.l2p and sorted(a.valid) == sorted(c.valid)  # another layout, the same distribution


def test_too_little_spare_for_a_steady_state_is_refused():
    with pytest.raises(ValueError, match="precondition=steady.*raise ftl.spare_fraction"):
        FtlConfig(enabled=True, span_bytes=32 << 20, pages_per_block=64, spare_fraction=0.01, precondition="steady")
    FtlConfig(enabled=False, span_bytes=32 << 20, pages_per_block=64, spare_fraction=0.01, precondition="steady")


# -- through a run --------------------------------------------------------------------------------

JOB = ROOT / "examples" / "randwrite-4k-qd32.fio"
SETS = {
    "ssd_count": "1",
    "ssd.ftl.span_bytes": str(64 << 20),
    "ssd.ftl.pages_per_block": "64",
    "runtime": "40ms",
}


def _run(precondition: str, seed: int = 1) -> dict:
    cfg = resolve(
        job_file=str(JOB), platform="icpe24-980pro", sets={**SETS, "ssd.ftl.precondition": precondition}, seed=seed
    )
    return simulate(cfg).summary["ssd_media"]["ssd0"]


def test_a_run_on_a_steady_drive_reports_the_analytic_figure_and_gc_time():
    m = _run("steady")
    f = ftl(64, 64, 0.07, "empty")  # the same geometry (the 980 PRO's 7% spare)
    assert m["write_amplification"] == pytest.approx(greedy_mean_field(f.data_spare, 64).write_amplification, rel=0.10)
    assert m["nand_pages"] == m["host_pages"] + m["gc_copies"] and m["erases"] > 0
    # GC time: its copies (a page read, then a program) and erases on the media units
    d = samsung_980pro()
    copy_ns = d.read.base_ns + (d.write_cache_program_ns or d.write.base_ns)
    assert m["gc_ns"] == pytest.approx(m["gc_copies"] * copy_ns + m["erases"] * d.ftl.erase_ns)


def test_a_run_on_a_steady_drive_is_deterministic():
    assert _run("steady", seed=5) == _run("steady", seed=5)


def test_a_steady_drive_without_room_is_refused_in_one_message(capsys):
    rc = main(
        ["run", str(JOB), "--platform", "icpe24-980pro", "--set", "ssd.ftl.precondition=steady"]
        + ["--set", "ssd.ftl.spare_fraction=0.01", "--set", f"ssd.ftl.span_bytes={32 << 20}"]
        + ["--set", "ssd.ftl.pages_per_block=64"]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "precondition=steady" in err and "Traceback" not in err


def test_the_steady_layout_comes_from_a_child_of_the_device_stream():
    """Another seed, another layout; the device's own draws (its service-time jitter) stay as
    they are, so a read-only run is the same on a steady drive as on a full one."""
    base = make_cfg(rw="randread", runtime_ms=20, ramp_ms=5)

    def run(precondition: str, seed: int):
        ftl_cfg = FtlConfig(enabled=True, span_bytes=32 << 20, pages_per_block=64, precondition=precondition)
        ssd = base.platform.ssd.model_copy(update={"ftl": ftl_cfg})
        plat = base.platform.model_copy(update={"ssd": ssd})
        return simulate(base.model_copy(update={"platform": plat, "seed": seed}), keep_model=True)

    a, b, full = run("steady", 3), run("steady", 4), run("full", 3)
    assert a.model.devices[0].ftl.l2p != b.model.devices[0].ftl.l2p
    assert a.summary["latency_us"] == full.summary["latency_us"] and a.summary["ios"] == full.summary["ios"]
