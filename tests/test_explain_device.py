"""The device's share of an IO's latency, stage by stage: the per-IO device record
(:class:`models.ssd.command.NvmeCommand`'s ``t_fetched`` ... ``dev_path``, in the run's records) and
``explain``'s rows from it (:func:`scenarios.studies.explain.device_rows`), on flash presets (random
reads on the NAND dies, sequential reads from read-ahead, buffered writes, reads suspending
programs) and on an Optane preset (one media share); and the per-device media counters."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate
from scenarios.studies.explain import (
    DEV_CHANNEL,
    DEV_CONTROLLER,
    DEV_RA_HIT,
    DEV_SUSPEND,
    DEV_UNIT,
    PAGE_NAMES,
    _kind,
    _segments,
    device_rows,
    explain,
    format_explanation,
)
from simcore.stats import records_array
from tests.conftest import composed_platform_file

#: the record's device times in pipeline order (each no earlier than the one before)
CAUSAL = ("t_dispatch_ns", "t_fetched_ns", "t_fw_ns", "t_stage_ns")


def _platform(tmp_path_factory, ssd: str) -> str:
    return composed_platform_file(tmp_path_factory.mktemp(ssd), "xeon-silver-4210r", ssd, 1)


class Run:
    """A run's result and its configuration's SSD."""

    def __init__(self, result, ssd) -> None:
        self.result, self.ssd, self.records = result, ssd, result.records

    def __getitem__(self, key):
        return self.result[key]


def _run(box: str, seed: int = 1, **job) -> Run:
    options = {"bs": "4k", "ioengine": "io_uring", "iodepth": "8", "direct": "1", "filename": "/dev/nvme0n1"}
    options.update({"time_based": "1", "runtime": "10ms", "ramp_time": "2ms", **job})
    cfg = resolve(platform=box, jobs=[job_from_options(options, name="t")], seed=seed)
    return Run(simulate(cfg, records=True), cfg.platform.ssd)


def _rows(rec: np.ndarray, i: int, names=PAGE_NAMES[3]) -> tuple[dict, list[tuple[str, float]]]:
    d = {n: rec[n][i].item() for n in rec.dtype.names}
    return d, device_rows(d, names)


def _check_conserved(rec: np.ndarray) -> None:
    """Every IO's rows: non-negative, summing to its device time (doorbell to completion entry)."""
    assert len(rec)
    for i in range(len(rec)):
        d, rows = _rows(rec, i)
        assert rows, d
        for label, ns in rows:
            assert ns >= -1e-6, (label, ns, d)
        assert sum(ns for _l, ns in rows) == pytest.approx(d["t_cqe_ns"] - d["t_dispatch_ns"], abs=1e-6)


@pytest.fixture(scope="module")
def flash(tmp_path_factory):
    return _platform(tmp_path_factory, "samsung-980pro")


@pytest.fixture(scope="module")
def random_read(flash):
    return _run(flash, rw="randread")


def test_random_reads_on_the_dies_tile_their_device_time(random_read):
    rec = random_read.records
    assert set(rec["dev_path"]) == {"media"}
    _check_conserved(rec)
    # causal: fetched, firmware done, controller done, media stage, data path, link, CQE
    for a, b in zip(CAUSAL, CAUSAL[1:]):
        assert (rec[a] <= rec[b]).all(), (a, b)
    assert (
        rec["t_stage_ns"] + rec["dev_wait_ns"] + rec["dev_suspend_ns"] + rec["dev_tr_ns"] <= rec["t_media_end_ns"]
    ).all()
    assert (rec["t_media_end_ns"] <= rec["t_xfer_ns"]).all()
    assert (rec["t_xfer_ns"] <= rec["t_dev_end_ns"]).all() and (rec["t_dev_end_ns"] <= rec["t_cqe_ns"]).all()


def test_a_4k_read_pays_its_page_types_tr_and_the_controllers_share(random_read):
    """The tR row is the array read time of the page type the address has (the preset's table:
    every 4 KiB read pays exactly one), the controller row the calibrated share, the channel row at
    least the 4 KiB transfer; reads land on every page type."""
    rec = random_read.records
    media = random_read.ssd.media
    tr = np.asarray(media.read_ns)[rec["dev_page_type"]]
    assert rec["dev_tr_ns"] == pytest.approx(tr)
    assert Counter(rec["dev_page_type"].tolist()).keys() == {0, 1, 2}
    d, rows = _rows(rec, 0)
    by = dict(rows)
    ctrl = media.controller_read_ns(random_read.ssd.read.base_ns)
    assert by[DEV_CONTROLLER] == pytest.approx(ctrl)
    assert by[DEV_CHANNEL] >= media.transfer_ns(4096) - 1e-6
    assert f"SSD: tR, {PAGE_NAMES[3][d['dev_page_type']]} page (NAND array read)" in by


def test_reads_behind_programs_show_their_suspend_wait(flash):
    """Mixed random reads and writes: the write buffer's programs occupy the dies, reads suspend
    them; the suspend row is the program's suspend latency (MQSim's 100 us), and the rows still
    tile each IO's device time."""
    r = _run(flash, rw="randrw", iodepth="16")
    rec = r.records
    assert set(rec["dev_path"]) == {"media", "buffer"}
    _check_conserved(rec)
    susp = rec["dev_suspend_ns"][rec["dev_suspend_ns"] > 0]
    assert len(susp) > 10
    assert susp == pytest.approx(r.ssd.media.program_suspend_ns)
    i = int(np.argmax(rec["dev_suspend_ns"]))
    assert dict(_rows(rec, i)[1])[DEV_SUSPEND] == pytest.approx(100_000.0)
    counters = r["summary"]["ssd_media"]["ssd0"]
    assert counters["media_programs"] > 0 and counters["suspends"] > 0


def test_random_writes_are_acknowledged_from_the_buffer(flash):
    r = _run(flash, rw="randwrite")
    rec = r.records
    assert set(rec["dev_path"]) == {"buffer"}
    _check_conserved(rec)
    for a, b in zip(
        ("t_fw_ns", "t_stage_ns", "t_xfer_ns", "t_dev_end_ns"), ("t_stage_ns", "t_xfer_ns", "t_dev_end_ns", "t_cqe_ns")
    ):
        assert (rec[a] <= rec[b]).all(), (a, b)
    labels = [label for label, _ns in _rows(rec, 0)[1]]
    assert "SSD: buffered write (acknowledged from the DRAM buffer)" in labels
    assert not any(label.startswith("SSD: tR") for label in labels)  # no NAND read in it
    counters = r["summary"]["ssd_media"]["ssd0"]
    assert counters["buffer_hits"] > 0 and "buffer_wait_ns" in counters
    assert counters["media_programs"] > 0 and counters["media_reads"] == 0


def test_sequential_reads_hit_the_read_ahead(tmp_path_factory):
    r = _run(_platform(tmp_path_factory, "pm1743"), rw="read", iodepth="1")
    rec = r.records
    assert set(rec["dev_path"]) == {"readahead"}
    _check_conserved(rec)
    rows = dict(_rows(rec, len(rec) // 2)[1])
    assert rows[DEV_RA_HIT] == pytest.approx(r.ssd.readahead.hit_ns)
    assert r["summary"]["ssd_media"]["ssd0"]["readahead_hits"] > 0


def test_split_ios_keep_their_last_pieces_record(flash):
    """1 MiB reads are split into pieces (max_sectors_kb): the IO's rows come from the piece it
    completed with and still tile its device time from its first piece's doorbell."""
    rec = _run(flash, rw="randread", bs="1m", iodepth="2").records
    _check_conserved(rec)


def test_optane_keeps_one_media_share(tmp_path_factory):
    rec = _run(_platform(tmp_path_factory, "optane-900p"), rw="randread").records
    assert set(rec["dev_path"]) == {"unit"}
    _check_conserved(rec)
    labels = [label for label, _ns in _rows(rec, 0)[1]]
    assert labels.count(DEV_UNIT) == 1 and not any(label.startswith(("SSD: tR", "SSD: die")) for label in labels)


def test_the_device_record_is_deterministic(flash):
    a, b = (_run(flash, rw="randrw", iodepth="16").records for _ in range(2))
    for name in ("t_fetched_ns", "t_stage_ns", "t_media_end_ns", "dev_suspend_ns", "dev_tr_ns", "dev_path"):
        assert (a[name] == b[name]).all(), name
    c = _run(flash, seed=2, rw="randrw", iodepth="16").records
    assert len(c) != len(a) or not (c["t_media_end_ns"] == a["t_media_end_ns"]).all()


def test_explain_shows_the_device_rows(flash):
    expl = explain(
        str(Path(__file__).resolve().parents[1] / "examples" / "randread-4k-hipri.fio"),
        flash,
        sets={"numjobs": "1"},
        runtime_ms=5,
        policies=["interrupt"],
    )
    w = expl.waterfalls[0]
    io = w.io
    assert sum(ns for _l, ns in w.device) == pytest.approx(io["t_cqe_ns"] - io["t_dispatch_ns"])
    ssd = [(label, start, dur) for label, start, dur in w.segments if label.startswith("SSD")]
    # laid end to end from the doorbell to the completion entry
    t = io["t_dispatch_ns"] - io["t_submit_ns"]
    for label, start, dur in ssd:
        assert start == pytest.approx(t), label
        t = start + dur
    assert t == pytest.approx(io["t_cqe_ns"] - io["t_submit_ns"])
    assert all(_kind(label)[0] != "other" for label, _s, _d in ssd)  # each has its legend entry
    text = format_explanation(expl)
    assert "SSD: tR, " in text and "the SSD's share" in text and "served: media" in text


def test_trims_are_one_device_row(flash):
    rec = _run(flash, rw="randtrim").records
    assert set(rec["dev_path"]) == {"other"}
    _check_conserved(rec)
    labels = [label for label, _ns in _rows(rec, 0)[1]]
    assert "SSD: device (trim service)" in labels and not any(label.startswith("SSD: tR") for label in labels)


def test_a_record_without_device_fields_keeps_the_old_rows():
    """A storage server's records have no device fields: no device rows, and the waterfall's SSD
    rows are the fetch / media / transfer ones from its device times."""
    rec = {
        n: r.item()
        for n, r in zip(records_array({"t_submit_ns": [0.0]}).dtype.names, records_array({"t_submit_ns": [0.0]})[0])
    }
    rec.update(t_dispatch_ns=1000.0, t_dev_start_ns=1200.0, device_service_ns=5000.0, t_dev_end_ns=7000.0)
    rec.update(t_cqe_ns=7300.0, t_reaped_ns=8000.0, t_complete_ns=9000.0)
    assert device_rows(rec) == []
    labels = [label for label, _s, _d in _segments(rec, "interrupt", True)]
    assert labels[1:4] == [
        "SSD: command fetch (+ queueing)",
        "SSD: media service",
        "SSD: data transfer (data path, link)",
    ]
