"""The published figures shipped with the package (scenarios/data/reference) and the built-in
calibrations behind ``stacksim calibrate --study NAME``."""

from __future__ import annotations

import configparser
import fnmatch
import json
from importlib import resources
from pathlib import Path

import pytest

from scenarios.data import reference
from scenarios.studies.builtin import STUDIES, StudyRow
from scenarios.studies.calibrate_cinterrupts import FIT_BOUNDS as CINT_BOUNDS
from simcore.errors import ConfigError
from stacksim.cli import main

ROOT = Path(__file__).resolve().parents[1]


def cli(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


# ----------------------------------------------------------------------------------- reference data
@pytest.mark.parametrize("name", reference.STUDIES)
def test_every_reference_file_validates_and_cites_its_source(name):
    st = reference.study(name)
    assert st.source.year >= 2000 and st.source.authors and st.source.venue
    assert st.figures
    for fig in st.figures:
        where = reference.cite(name, fig)
        assert where.startswith(", ".join(st.source.authors[:-1])) and str(st.source.year) in where
        assert st.figures[fig].where in where


def test_values_are_copies_and_unknown_names_are_clear():
    v = reference.values("io_schedulers_ull", "median_latency_4k_qd1")
    v["none"]["read"] = -1.0
    assert reference.values("io_schedulers_ull", "median_latency_4k_qd1")["none"]["read"] > 0
    with pytest.raises(ConfigError, match="unknown reference study 'nope'"):
        reference.values("nope", "x")
    with pytest.raises(ConfigError, match="has no figure 'nope'"):
        reference.values("io_schedulers_ull", "nope")


def test_reference_files_are_package_data():
    """Every shipped file is matched by setup.cfg's package_data, so an installed package has it."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    patterns = [p.strip() for p in cfg["options.package_data"]["scenarios.data.reference"].split(",")]
    shipped = [f.name for f in resources.files("scenarios.data.reference").iterdir() if f.name.endswith(".yaml")]
    assert sorted(shipped) == sorted(f"{n}.yaml" for n in reference.STUDIES)
    for name in shipped:
        assert any(fnmatch.fnmatch(name, p) for p in patterns), name


def test_nothing_reads_reference_data_from_outside_the_package():
    needles = ("shared" + "/reference", "STACKSIM" + "_REFERENCE", ".." + "/shared")
    hits = []
    files = [
        p
        for d in (
            "simcore",
            "models",
            "policies",
            "scenarios",
            "stacksim",
            "tests",
            "docs",
            "examples",
            "benchmarks",
            ".ci",
        )
        for p in (ROOT / d).rglob("*")
    ] + list(ROOT.glob("*"))
    for path in files:
        if path.suffix not in (".py", ".md", ".cfg", ".toml", ".yaml", ".fio", "") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{path.relative_to(ROOT)}: {n}" for n in needles if n in text]
    assert not hits


# ----------------------------------------------------------------------------------- studies
def test_list_studies_and_stacksim_list_name_every_study(capsys):
    rc, out, _ = cli(["calibrate", "--list-studies"], capsys)
    assert rc == 0
    listed = [line.split()[0] for line in out.splitlines()]
    assert (
        listed == list(STUDIES) == ["poll-energy", "memops", "io-schedulers", "cinterrupts", "cheops23", "server-power"]
    )
    rc, out, _ = cli(["list"], capsys)
    assert rc == 0 and "calibrate --study NAME): " + ", ".join(STUDIES) in out


def test_a_study_runs_end_to_end_from_the_cli(tmp_path, capsys):
    """cinterrupts, cut short (1 ms per run, one least-squares iteration): fitted values, residuals
    against the shipped figures, and the result file."""
    out_file = tmp_path / "cint.json"
    rc, out, err = cli(
        ["calibrate", "--study", "cinterrupts", "--runtime-ms", "1", "--max-iterations", "1", "-o", str(out_file)],
        capsys,
    )
    assert rc == 0, err
    assert err == ""  # progress only on a terminal
    assert "models/platforms.py CINTERRUPTS_FIT = {" in out
    assert "NOTE: not converged after 1 least-squares iteration:" in out and f"wrote {out_file}" in out
    res = json.loads(out_file.read_text())
    assert res["study"] == "cinterrupts" and res["converged"] is False
    assert set(res["fitted"]) == set(CINT_BOUNDS) == set(res["parameters"])
    for name, (lo, hi) in CINT_BOUNDS.items():
        assert lo <= res["fitted"][name] <= hi
    published = reference.values("calibrated_interrupts", "sync_read_latency_4k")
    rows = {r["label"]: r for r in res["residuals"]}
    assert len(rows) == 8
    assert rows["p3700 interrupts latency mean"]["measured"] == published["p3700"]["interrupts"]["mean_us"]
    assert rows["optane polling latency sd"]["measured"] == published["optane"]["polling"]["sd_us"]
    for r in rows.values():
        assert r["model"] > 0 and r["residual_pct"] == pytest.approx(100 * (r["model"] / r["measured"] - 1))
        assert f"{r['label']} " in out
    assert "Tai, Smolyar, Wei & Tsafrir" in res["sources"][0]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--study", "nope"], "unknown study 'nope' (built-in: poll-energy, memops"),
        (
            ["--study", "memops", "--platform", "optane900p-e3-1230v5"],
            "--platform is for fitting your own measurements",
        ),
        (["--study", "memops", "--fit", "ssd.read.base_ns=1:2", "--set", "bs=8k"], "--fit, --set are for fitting"),
        (["--study", "memops", "--list-studies"], "not both"),
        (["--study", "memops", "--max-iterations", "3"], "--max-iterations does not apply"),
        (["--study", "cinterrupts", "--max-iterations", "0"], "--max-iterations 0: expected at least 1"),
        (["--study", "cinterrupts", "--runtime-ms", "0"], "--runtime-ms must be at least 1"),
        (["--study", "cinterrupts", "-o", "OUT.yaml"], "calibrates two platforms; write the result as .json"),
        (["--study", "poll-energy", "-o", "OUT.csv"], "as .json, or the calibrated platform as .yaml"),
        (["--study", "poll-energy", "-o", "no/such/dir/fit.json"], "directory no/such/dir does not exist"),
        ([], "calibrate needs --platform, --measured, --fit, -o"),
    ],
)
def test_bad_study_invocations_exit_2_with_one_message(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli(["calibrate", *argv], capsys)
    assert rc == 2
    assert message in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_row_without_a_published_value_has_no_residual():
    assert StudyRow("hybrid blk_poll", None, 12.0).residual is None
    assert StudyRow("interrupt blk_poll", 0.0, 0.0).residual is None
    assert StudyRow("x", 10.0, 11.0).residual == pytest.approx(0.1)
