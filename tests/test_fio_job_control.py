"""fio's job control run end to end: rw=...:<n> offset modifiers with rw_sequencer, loops,
number_ios, offset_increment and startdelay (offsets and times of the simulated requests)."""

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate

PLATFORM = "optane900p-e3-1230v5"


def _records(body, engine="psync"):
    text = f"[global]\nioengine={engine}\ndirect=1\nbs=4k\n" + body
    res = simulate(resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLATFORM), keep_model=True)
    return res.model.records


def _kib(recs):
    return [r.offset // 1024 for r in recs]


@pytest.mark.parametrize("engine", ["psync", "libaio"])
def test_sequential_holes_end_at_the_region(engine):
    # rw=read:4k: 4 KiB skipped after each 4 KiB read; a size-bounded job stops at the end
    assert _kib(_records("[j]\nrw=read:4k\nsize=64k\niodepth=4\n", engine)) == list(range(0, 64, 8))


def test_random_offset_every_n_ios_sequential_between():
    offs = _kib(_records("[j]\nrw=randread:4\nsize=1m\nnumber_ios=12\n"))
    assert len(offs) == 12
    # fio's ddir_seq_nr: every 4th IO (indices 3, 7, 11) takes a new random offset, the others follow on
    for k in range(1, 12):
        if (k + 1) % 4:
            assert offs[k] == offs[k - 1] + 4, (k, offs)
    assert offs[:3] == [0, 4, 8]


def test_identical_sequencer_repeats_the_offset():
    offs = _kib(_records("[j]\nrw=randread:4\nrw_sequencer=identical\nsize=1m\nnumber_ios=12\n"))
    assert offs[3] == offs[4] == offs[5] == offs[6] and offs[7] == offs[8] == offs[9] == offs[10]


def test_loops_repeat_a_size_bounded_job():
    assert _kib(_records("[j]\nrw=read\nsize=16k\nloops=3\n")) == [0, 4, 8, 12] * 3


@pytest.mark.parametrize("engine", ["psync", "io_uring"])
def test_number_ios_stops_each_thread(engine):
    recs = _records("[j]\nrw=randread\nsize=1m\nnumber_ios=10\nnumjobs=2\niodepth=4\n", engine)
    assert len(recs) == 20


def test_offset_increment_separates_the_clones():
    recs = _records("[j]\nrw=read\nsize=16k\nnumjobs=3\noffset_increment=1m\n")
    by_clone = {}
    for r in recs:
        by_clone.setdefault(r.task.tid, []).append(r.offset // 1024)
    assert sorted(by_clone.values()) == [[k * 1024 + o for o in (0, 4, 8, 12)] for k in range(3)]


def test_startdelay_shifts_the_job_and_its_end():
    recs = _records("[a]\nrw=read\nruntime=1ms\ntime_based\n[b]\nrw=read\nruntime=1ms\ntime_based\nstartdelay=2ms\n")
    a = [r.t_submit for r in recs if r.job == 0]
    b = [r.t_submit for r in recs if r.job == 1]
    assert max(a) < 1e6 and 2e6 <= min(b) and max(b) < 3e6
    assert 0.7 < len(b) / len(a) < 1.3  # the same 1 ms of work, later


def test_startdelay_range_draws_per_thread():
    recs = _records("[j]\nrw=read\nruntime=1ms\ntime_based\nnumjobs=4\nstartdelay=1ms-5ms\n")
    starts = {}
    for r in recs:
        starts[r.task.tid] = min(starts.get(r.task.tid, 1e18), r.t_submit)
    assert all(1e6 <= t <= 5.5e6 for t in starts.values()) and len({round(t, -4) for t in starts.values()}) > 1


def test_a_startdelay_moves_the_measured_window_with_the_job():
    """fio starts a job's threads after its startdelay and ramps from there: the measured window is
    [startdelay + ramp_time, + runtime], so a delayed job measures what an undelayed one does (before,
    the window opened at ramp_time: a 2 ms delay halved the IOPS and counted the ramp's IOs)."""
    out = {}
    for delay in ("0", "2ms"):
        text = (
            "[global]\ndirect=1\nbs=4k\nrw=randread\nioengine=pvsync2\n"
            f"[a]\nruntime=3ms\ntime_based\nramp_time=1ms\nstartdelay={delay}\n"
        )
        job = simulate(resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLATFORM)).data["jobs"][0]
        out[delay] = (job["read"]["runtime"], job["read"]["iops"], job["read"]["total_ios"])
    (rt0, iops0, n0), (rt2, iops2, n2) = out["0"], out["2ms"]
    assert rt0 == rt2 == 3
    assert iops2 == pytest.approx(iops0, rel=0.02) and abs(n2 - n0) <= 3
