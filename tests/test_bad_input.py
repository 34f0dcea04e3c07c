"""Bad input of every family gets one ``stacksim: error:`` line and exit status 2: no traceback, no
output file. Numbers out of range, files that are not what they claim, wrong CSVs, bad measurements
and bad trace records (the CLI is driven in-process; nothing here simulates more than 1 ms)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import FIO_MAX_JOBS, MAX_RW_BYTES, parse_fio_text
from simcore.config import SEED_MAX, load_data_file
from simcore.errors import ConfigError
from stacksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = "optane900p-e3-1230v5"
QUICK = ["--set", "runtime=1ms", "--set", "ramp_time=0", "--quiet"]
PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def refused(capsys, args: list[str], *needles: str, out: Path | None = None) -> str:
    """Run the CLI; assert exit 2, one ``stacksim: error:`` line naming ``needles``, no ``out``."""
    rc = main(args)
    cap = capsys.readouterr()
    assert rc == 2, (rc, cap.err[-2000:])
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("stacksim: error: "), cap.err
    assert "Traceback" not in cap.err
    for n in needles:
        assert n in cap.err, (n, cap.err)
    if out is not None:
        assert not out.exists()
    return cap.err


def exit_0_or_2(capsys, args: list[str]) -> int:
    """For property tests: the CLI ends with 0 or a clean exit 2, never an exception."""
    rc = main(args)
    cap = capsys.readouterr()
    assert rc in (0, 2), (rc, cap.err[-2000:])
    if rc == 2:
        assert cap.err.startswith("stacksim: error: ") and "Traceback" not in cap.err
    return rc


# -- numbers out of range or absurd ----------------------------------------------------------------
@pytest.mark.parametrize("seed", ["-1", str(SEED_MAX + 1), str(10**30)])
def test_seeds_outside_63_bits_are_refused(capsys, tmp_path, seed):
    out = tmp_path / "r.json"
    refused(capsys, ["run", "--seed", seed, "--json", str(out), *QUICK], f"--seed {seed}", "2**63-1", out=out)


def test_largest_seed_runs(capsys):
    assert main(["run", "--seed", str(SEED_MAX), *QUICK]) == 0


def test_scenario_file_seed_out_of_range_is_refused(capsys, tmp_path):
    scen = tmp_path / "s.yaml"
    scen.write_text((ROOT / "scenarios/data/builtin/default.yaml").read_text() + f"seed: {2**64}\n")
    refused(capsys, ["run", str(scen), *QUICK], "seed")


@pytest.mark.parametrize(
    "option, value, needle",
    [
        ("bs", "9" * 5000, "beyond 64 bits"),
        ("bs", "99999999999999999999999k", "beyond 64 bits"),
        ("bs", "0x" + "f" * 100, "bad hexadecimal size"),
        ("bs", "4g", "MAX_RW_COUNT"),
        ("size", "16385p", "beyond 64 bits"),
        ("offset", "1" + "0" * 25, "beyond 64 bits"),
        ("runtime", "99999999999d", "104 days"),
        ("numjobs", str(FIO_MAX_JOBS + 1), "4096"),
        ("numjobs", "9" * 5000, "beyond 64 bits"),
        ("cpus_allowed", "0-99999999999", "8191"),
        ("bssplit", "4k/nan:8k/50", "percentage"),
    ],
)
def test_fio_numbers_out_of_range_name_the_option(capsys, option, value, needle):
    refused(capsys, ["run", *QUICK, "--set", f"{option}={value}"], f"option '{option}'", needle)


def test_fio_job_file_sizes_beyond_64_bits_report_file_and_line(capsys, tmp_path):
    job = tmp_path / "big.fio"
    job.write_text("[global]\ndirect=1\nruntime=1ms\n\n[j]\nrw=randread\nsize=" + "7" * 300 + "\n")
    refused(
        capsys, ["run", str(job), "--platform", PLATFORM, "--quiet"], f"{job} line 7", "option 'size'", "beyond 64 bits"
    )


@pytest.mark.parametrize(
    "engine, depth, needle",
    [
        ("io_uring", 32769, "IORING_MAX_ENTRIES"),
        ("libaio", 65537, "aio-max-nr"),
    ],
)
def test_iodepth_beyond_the_kernel_limit_is_refused(capsys, engine, depth, needle):
    refused(
        capsys, ["run", "--set", f"ioengine={engine}", "--set", f"iodepth={depth}", *QUICK], f"iodepth={depth}", needle
    )


def test_numjobs_added_up_over_jobs_beyond_fio_max_jobs(capsys, tmp_path):
    job = tmp_path / "many.fio"
    job.write_text("[global]\ndirect=1\nruntime=1ms\nnumjobs=3000\n[a]\n[b]\n")
    refused(capsys, ["run", str(job), "--platform", PLATFORM, "--quiet"], "6000 jobs", "--max-jobs")


@pytest.mark.parametrize(
    "key, value, needle",
    [
        ("ssd.read.base_ns", "nan", "finite"),
        ("ssd.read.base_ns", "inf", "finite"),
        ("ssd.read.base_ns", "-inf", "finite"),
        ("ssd.read.base_ns", "1e300", "1 day"),
        ("cpu.max_freq_ghz", "1e12", "GHz"),
        ("cpu.min_freq_ghz", "0", "greater than 0"),
        ("cpu.cstates.1.power_w", "-1", "greater than or equal to 0"),
        ("power.dram_w", "1e308", "W"),
        ("kernel.ctx_switch_cycles", "1e30", "cycles"),
        ("cpu.physical_cores", "100000000", "8192"),
        ("queue.nr_requests", "1000000", "10240"),
        ("ssd.max_queue_depth", "1000000", "65536"),
        ("ssd.parallel_units", "1000000000000", "65536"),
        ("sched.tick_hz", "1000000000", "1000"),
        ("power.meter_hz", "1e9", "1000"),
    ],
)
def test_absurd_platform_overrides_are_refused(capsys, key, value, needle):
    refused(capsys, ["run", "--set", f"{key}={value}", *QUICK], key, needle)


@pytest.mark.parametrize("governor, key", [("ondemand", "sampling_rate"), ("schedutil", "rate_limit_us")])
def test_governor_tunables_beyond_their_sysfs_unsigned_int_are_refused(capsys, governor, key):
    """A sampling period of 10**21 us would make the governor never sample: the sysfs value is an
    unsigned int, so anything above 2**32-1 is refused, naming the tunable."""
    refused(
        capsys,
        ["run", "--set", f"cpu.cpufreq_governor={governor}", "--set", f"cpu.cpufreq.{key}={10**21}", *QUICK],
        key,
        "4294967295",
    )


def test_polling_with_a_single_queue_pair_is_a_clear_error(capsys):
    """Fewer queue pairs than CPUs are shared (Linux's mapping), but one pair leaves no poll queue."""
    args = ["run", "--set", "ssd.max_queue_pairs=1", "--set", "queue.io_poll=1", "--set", "hipri=1", *QUICK]
    refused(capsys, args, "ssd.max_queue_pairs=1", "no poll")


def test_platform_yaml_with_nan_and_absurd_values_is_refused(capsys, tmp_path):
    from models.platforms import PLATFORMS

    data = PLATFORMS[PLATFORM]().model_dump(mode="json")
    data["ssd"]["write"]["base_ns"] = float("nan")
    data["cpu"]["core_dynamic_w"] = 1e200
    path = tmp_path / "p.yaml"
    import yaml

    path.write_text(yaml.safe_dump(data))
    err = refused(
        capsys, ["run", "--platform", str(path), *QUICK], str(path), "ssd.write.base_ns", "cpu.core_dynamic_w"
    )
    assert err.count("stacksim: error:") == 1


@PROPS
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_for_a_latency_power_or_frequency_is_accepted_or_refused_by_the_model(x):
    """The Python API: a platform value either validates (finite, in range) or is a ConfigError."""
    for key in ("ssd.read.base_ns", "cpu.core_leakage_w", "cpu.max_freq_ghz", "cpu.cstates.2.exit_latency_ns"):
        try:
            cfg = resolve(sets={key: repr(x), "runtime": "1ms"})
        except ConfigError as err:
            assert key.rsplit(".", 1)[-1] in str(err)
            continue
        assert math.isfinite(x)
        section, *rest = key.split(".")
        node = getattr(cfg.platform, section)
        for part in rest:
            node = node[int(part)] if part.isdigit() else getattr(node, part)
        assert node == x


@PROPS
@given(st.text(alphabet="0123456789kmgtpKMGTPbBi+-x%.", min_size=1, max_size=60))
def test_any_size_string_for_bs_is_a_size_or_a_clear_error(s):
    try:
        job = parse_fio_text(f"[j]\ndirect=1\nruntime=1ms\nbs={s}\n").jobs[0]
    except ConfigError as err:
        assert "option 'bs'" in str(err) and "line 4" in str(err)
        return
    assert 0 < job.bs_read_bytes <= MAX_RW_BYTES and job.bs_read_bytes % 512 == 0


# -- files that are not what they claim ------------------------------------------------------------
BINARY = bytes(range(256)) * 4


@pytest.mark.parametrize(
    "name, content, needle",
    [
        ("s.yaml", BINARY, "NUL bytes"),
        ("s.yaml", b"name: x\nplatform: \xff\xfe\n", "not UTF-8"),
        ("s.yaml", b"[" * 100_000, "levels deep"),
        ("s.yaml", b"a: " + b"[" * 5000 + b"]" * 5000, "levels deep"),
        ("s.yaml", b"x: " + b"9" * 5000, "not valid YAML"),
    ],
)
def test_scenario_files_that_are_not_yaml(capsys, tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_bytes(content)
    refused(capsys, ["run", str(path), "--quiet"], str(path), needle)


@pytest.mark.parametrize(
    "content, needle",
    [
        (BINARY, "NUL bytes"),
        (b"[global]\ndirect=1\n[j]\nrw=\xe9\n", "line 4: not UTF-8"),
    ],
)
def test_job_files_that_are_not_text(capsys, tmp_path, content, needle):
    path = tmp_path / "j.fio"
    path.write_bytes(content)
    refused(capsys, ["run", str(path), "--platform", PLATFORM, "--quiet"], str(path), needle)


def test_platform_files_that_are_not_yaml(capsys, tmp_path):
    for content in (BINARY, b"cpu: " + b"{a: " * 3000 + b"}" * 3000):
        path = tmp_path / "p.yaml"
        path.write_bytes(content)
        refused(capsys, ["run", "--platform", str(path), *QUICK], str(path))


def test_deeply_nested_yaml_is_a_config_error(tmp_path):
    path = tmp_path / "n.yaml"
    path.write_text("a: " + "{b: " * 150 + "1" + "}" * 150 + "\n")
    with pytest.raises(ConfigError, match="nested 101 levels deep"):
        load_data_file(path)
    path.write_text("a: " + "[" * 90 + "1" + "]" * 90 + "  # [[[[[[\nb: '" + "[" * 200 + "'\n")
    assert load_data_file(path)["b"] == "[" * 200  # brackets in comments and quotes do not count


def test_yaml_nested_by_indentation_beyond_the_recursion_limit_is_a_config_error(tmp_path):
    path = tmp_path / "n.yaml"
    path.write_text("".join(" " * i + f"k{i}:\n" for i in range(1200)))
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_data_file(path)


@PROPS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_as_a_job_file_or_scenario(capsys, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("b")
    for name in ("j.fio", "s.yaml", "p.yaml"):
        (d / name).write_bytes(data)
    exit_0_or_2(capsys, ["run", str(d / "j.fio"), "--platform", PLATFORM, *QUICK])
    exit_0_or_2(capsys, ["run", str(d / "s.yaml"), *QUICK])
    exit_0_or_2(capsys, ["run", "--platform", str(d / "p.yaml"), *QUICK])


# -- CSVs of the wrong kind -------------------------------------------------------------------------
WRONG_CSVS = {
    "trace": (ROOT / "scenarios/data/traces/msr_sample.csv").read_bytes(),
    "points": b"bs,iodepth,metric.latency_us.mean\n4k,1,10.5\n",
    "text": b"hello, world\nthis is not a table\n",
    "binary": BINARY,
    "empty": b"",
    "ragged": b"sweep,point,replicate,config_sha\nx,p,0,abc,extra,fields\n",
}


@pytest.mark.parametrize("kind", sorted(WRONG_CSVS))
def test_analyze_and_report_refuse_a_csv_of_another_kind(capsys, tmp_path, kind):
    csv = tmp_path / "x.csv"
    csv.write_bytes(WRONG_CSVS[kind])
    html = tmp_path / "r.html"
    refused(capsys, ["analyze", "efficiency", str(csv)], str(csv))
    refused(capsys, ["report", str(csv), "-o", str(html)], str(csv), out=html)


@pytest.mark.parametrize("fresh", [[], ["--fresh"]])
def test_sweep_output_onto_a_csv_of_another_kind_leaves_it_untouched(capsys, tmp_path, fresh):
    csv = tmp_path / "trace.csv"
    csv.write_bytes(WRONG_CSVS["trace"])
    refused(capsys, ["sweep", "poll_energy_small", "-o", str(csv), *fresh], "not a stacksim sweep results file")
    assert csv.read_bytes() == WRONG_CSVS["trace"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.csv"]  # no lock, journal or temporary file


def test_sweep_output_holding_another_sweeps_results_is_refused(capsys, tmp_path):
    csv = tmp_path / "r.csv"
    text = "sweep,point,replicate,seed,config_sha,code_sha\nother_sweep,a=1,0,5,abc,def\n"
    csv.write_text(text)
    refused(capsys, ["sweep", "poll_energy_small", "-o", str(csv)], "other_sweep", "another results file")
    assert csv.read_text() == text


# -- measurements with impossible values -----------------------------------------------------------
@pytest.mark.parametrize(
    "value, needle",
    [
        ("-3", "cannot be negative"),
        ("0", "must be positive"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
    ],
)
def test_measured_points_with_impossible_latencies(capsys, tmp_path, value, needle):
    csv = tmp_path / "m.csv"
    csv.write_text(f"bs,metric.latency_us.mean,metric.iops\n4k,12.5,80000\n8k,{value},70000\n")
    out = tmp_path / "v.json"
    refused(
        capsys,
        ["validate", "--platform", PLATFORM, "--measured", str(csv), "--json", str(out)],
        f"{csv}:3",
        "metric.latency_us.mean",
        needle,
        out=out,
    )
    cal = tmp_path / "cal.yaml"
    refused(
        capsys,
        [
            "calibrate",
            "--platform",
            PLATFORM,
            "--measured",
            str(csv),
            "--fit",
            "ssd.read.base_ns=1000:9000",
            "-o",
            str(cal),
        ],
        f"{csv}:3",
        needle,
        out=cal,
    )


def _fio_json(clat: dict) -> dict:
    return {
        "fio version": "fio-3.33",
        "jobs": [
            {
                "jobname": "j",
                "groupid": 0,
                "error": 0,
                "usr_cpu": 1.0,
                "sys_cpu": 2.0,
                "ctx": 10,
                "majf": 0,
                "minf": 0,
                "job options": {"rw": "randread", "bs": "4k", "ioengine": "psync", "direct": "1"},
                "read": {
                    "iops": 1000.0,
                    "bw": 4000,
                    "io_bytes": 4096000,
                    "total_ios": 1000,
                    "runtime": 1000,
                    "clat_ns": clat,
                    "lat_ns": clat,
                },
                "write": {"iops": 0, "bw": 0, "io_bytes": 0, "total_ios": 0, "runtime": 0},
            }
        ],
    }


@pytest.mark.parametrize(
    "clat, needle",
    [
        ({"min": -5, "max": 10, "mean": 3, "stddev": 1, "N": 1000}, "clat_ns.min: -5 is negative"),
        ({"min": 0, "max": 0, "mean": 0, "stddev": 0, "N": 1000}, "clat_ns.mean: 0 with N=1000"),
        ({"min": 1, "max": 10, "mean": 5, "stddev": 1, "N": 1000, "percentile": {"99.0": -7}}, "is negative"),
    ],
)
def test_fio_json_with_impossible_latencies(capsys, tmp_path, clat, needle):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_fio_json(clat)))
    refused(capsys, ["validate", "--platform", PLATFORM, "--measured", str(path)], f"{path}:1", "jobs[0].read", needle)


# -- traces -----------------------------------------------------------------------------------------
MSR_HEAD = "\n".join((ROOT / "scenarios/data/traces/msr_sample.csv").read_text().splitlines()[:4]) + "\n"


def _msr(tmp_path, last: str, *, gz: bool = False, header: bool = False) -> Path:
    """An MSR trace: (a header line and a blank line,) 4 sample records, then ``last``."""
    text = (
        ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\n" if header else "") + MSR_HEAD + last + "\n"
    )
    path = tmp_path / ("t.csv.gz" if gz else "t.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


@pytest.mark.parametrize(
    "last, needle",
    [
        ("128166372000002000,hm,0,Read,99999999999999999999,4096,10", "beyond 2**63-1 bytes"),
        ("128166372000002000,hm,0,Read,9223372036854775800,4096,10", "beyond 2**63-1 bytes"),
        ("128166372000002000,hm,0,Read,0,4294967296,10", "MAX_RW_COUNT"),
        ("128166372000002000,hm,0,Read,0," + "9" * 5000 + ",10", "beyond 64 bits"),
        ("999999999999999999999999999999,hm,0,Read,0,4096,10", "2**53 ns"),
    ],
)
def test_trace_records_out_of_range_are_refused_with_their_line(capsys, tmp_path, last, needle):
    path = _msr(tmp_path, last)
    out = tmp_path / "r.json"
    refused(
        capsys,
        ["replay", str(path), "--format", "msr", "--platform", PLATFORM, "--quiet", "--json", str(out)],
        f"{path}:5:",
        needle,
        out=out,
    )


@pytest.mark.parametrize("gz", [False, True])
def test_malformed_trace_line_has_its_true_line_number(capsys, tmp_path, gz):
    path = _msr(tmp_path, "128166372000002000,hm,0,Read,12ab,4096,10", gz=gz, header=True)
    refused(
        capsys,
        ["replay", str(path), "--format", "msr", "--platform", PLATFORM, "--quiet"],
        f"{path}:7:",
        "offset '12ab'",
    )


def test_out_of_range_records_are_skipped_and_counted_with_skip_bad_lines():
    import tempfile

    from scenarios.inputs.traces.reader import open_trace

    with tempfile.TemporaryDirectory() as d:
        path = _msr(Path(d), "128166372000002000,hm,0,Read,0,4294967296,10")
        reader = open_trace(path, "msr", skip_bad_lines=True)
        recs = list(reader)
        assert len(recs) == 4 and reader.bad_lines == 1


@PROPS
@given(st.text(alphabet="0123456789,.-+eE ReadWritehm\t", max_size=80))
def test_any_msr_line_is_a_record_a_skip_or_an_error_naming_its_line(line):
    import tempfile

    from scenarios.inputs.traces.reader import MAX_IO_BYTES, MAX_OFFSET_BYTES, open_trace

    with tempfile.TemporaryDirectory() as d:
        path = _msr(Path(d), line.replace("\n", " "), header=True)
        try:
            recs = list(open_trace(path, "msr"))
        except ConfigError as err:
            assert f"{path}:7:" in str(err)
            return
    for r in recs:
        assert r.offset + r.nbytes <= MAX_OFFSET_BYTES and 0 < r.nbytes <= MAX_IO_BYTES


@pytest.mark.parametrize(
    "args, needle",
    [
        (["replay", "TRACE", "--window", "0:1e300"], "2**53 ns"),
        (["replay", "TRACE", "--window", "nan:1"], "finite"),
        (["replay", "TRACE", "--speed", "nan"], "speed"),
        (["run", "--trace-window", "nan:inf", "--trace", "OUT", *QUICK], "--trace-window"),
        (["analyze", "efficiency", "RESULTS", "--alpha", "nan"], "--alpha"),
        (["run", "--scenario", "server-stable", "--set", "workload.connections=100000000", "--quiet"], "connections"),
    ],
)
def test_absurd_command_line_numbers(capsys, tmp_path, args, needle):
    trace = ROOT / "scenarios/data/traces/msr_sample.csv"
    results = tmp_path / "r.csv"
    results.write_text("sweep,point,replicate,config_sha\ns,a=1,0,x\n")
    out = tmp_path / "t.json"
    args = [
        str(trace) if a == "TRACE" else str(out) if a == "OUT" else str(results) if a == "RESULTS" else a for a in args
    ]
    if args[0] == "replay":
        args += ["--platform", PLATFORM, "--quiet"]
    refused(capsys, args, needle, out=out)


def test_sweep_file_with_nan_axis_and_negative_seed_names_both_once(capsys, tmp_path):
    sweep = tmp_path / "s.yaml"
    sweep.write_text("name: s\nbase: {scenario: default}\nseed: -4\naxes:\n  ssd.read.base_ns: [.nan, 5000]\n")
    out = tmp_path / "r.csv"
    err = refused(
        capsys,
        ["sweep", str(sweep), "-o", str(out)],
        "axes.ssd.read.base_ns.0: Input should be a finite number",
        "seed: Input should be greater than or equal to 0",
        out=out,
    )
    assert "valid dictionary" not in err and "valid boolean" not in err  # union members folded into one message
    assert err.count("\n") == 2


def test_a_number_of_thousands_of_digits_is_shown_shortened(capsys):
    err = refused(capsys, ["run", *QUICK, "--set", "power.dram_w=1" + "0" * 4000], "power.dram_w", "4001 characters")
    assert len(err) < 300


def test_ms_options_become_fio_times_or_clear_errors():
    from scenarios.inputs.fio.units import ms_time, parse_time_ns

    assert ms_time(50.0, option="--runtime-ms") == "50ms"
    assert parse_time_ns(ms_time(0.5, option="--runtime-ms"), option="runtime") == 500_000  # was '0.5ms': refused
    for bad in (float("nan"), float("inf"), -1.0, 1e30):
        with pytest.raises(ConfigError, match="--runtime-ms"):
            ms_time(bad, option="--runtime-ms")


def test_fio_json_nested_too_deeply(capsys, tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    refused(capsys, ["validate", "--platform", PLATFORM, "--measured", str(path)], f"{path}:1", "nested too deeply")


# -- inputs that are not regular files ---------------------------------------------------------------
def test_a_stream_without_end_is_read_with_a_bound_and_refused(tmp_path, capsys):
    """``job_file: /dev/zero`` once filled 24 GB of memory: configuration text is read with a limit."""
    scen = tmp_path / "z.yaml"
    scen.write_text(f"name: z\nplatform: {PLATFORM}\njob_file: /dev/zero\n")
    refused(capsys, ["run", "--scenario", str(scen), *QUICK], "job file /dev/zero", "device gives more than 64 MiB")
    big = tmp_path / "big.fio"
    with open(big, "wb") as fh:
        fh.truncate(65 * 2**20)  # sparse: nothing written
    refused(capsys, ["run", str(big), "--platform", PLATFORM, *QUICK], "larger than 64 MiB")


def test_a_directory_or_device_is_named_for_what_it_is(tmp_path, capsys):
    for args in (
        ["run", str(tmp_path), "--platform", PLATFORM],
        ["run", "--scenario", str(tmp_path)],
        ["run", "--platform", str(tmp_path)],
    ):
        refused(capsys, [*args, *QUICK], f"{tmp_path} is a directory, not a file")
    scen = tmp_path / "d.yaml"
    scen.write_text(f"name: d\nplatform: {PLATFORM}\njob_file: {tmp_path}\n")
    refused(capsys, ["run", "--scenario", str(scen), *QUICK], "is a directory, not a file")


def test_a_fifo_is_read_like_a_file(tmp_path, capsys):
    """``/dev/stdin``, a process substitution or a named pipe: the job file is streamed in."""
    import os
    import threading

    fifo = tmp_path / "job.fio"
    os.mkfifo(fifo)
    text = (ROOT / "examples" / "randread-4k-hipri.fio").read_text()
    writer = threading.Thread(target=lambda: fifo.write_text(text))
    writer.start()
    try:
        assert main(["run", str(fifo), "--platform", PLATFORM, "--json", str(tmp_path / "o.json"), *QUICK]) == 0
    finally:
        writer.join(timeout=10)
    assert json.loads((tmp_path / "o.json").read_text())["summary"]["ios"] > 0


# -- contradictions in a platform ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "sets, needles",
    [
        (["cpu.cstates.2.name=C1"], ("cstates[2]", "'C1' is also cstates[1]")),  # residencies would overwrite
        (["cpu.cstates.1.exit_latency_ns=300000"], ("cstates[1] (C1)", "longer than target_residency_ns")),
        (
            ["cpu.cstates.3.target_residency_ns=90000", "cpu.cstates.3.exit_latency_ns=9000"],
            ("cstates[3] (C3)", "exit_latency_ns 9000 is below cstates[2] (C1E)'s 10000", "shallowest first"),
        ),
    ],
)
def test_a_contradictory_cstate_table_is_refused(capsys, sets, needles):
    args = [a for s in sets for a in ("--set", s)]
    refused(capsys, ["run", "--platform", PLATFORM, *args, *QUICK], *needles)


def test_a_reversed_cstate_table_is_refused(tmp_path, capsys):
    """Reversed, the governor would never leave POLL: the table must be shallowest first."""
    from models.platforms import PLATFORMS

    data = PLATFORMS[PLATFORM]().model_dump(mode="json")
    data["cpu"]["cstates"] = list(reversed(data["cpu"]["cstates"]))
    path = tmp_path / "rev.yaml"
    path.write_text(json.dumps(data))
    refused(capsys, ["run", "--platform", str(path), *QUICK], "only the first state may be a polling state")
    data["cpu"]["cstates"] = data["cpu"]["cstates"][:-1]  # without POLL: the depth order is what is wrong
    path.write_text(json.dumps(data))
    refused(capsys, ["run", "--platform", str(path), *QUICK], "shallowest first")


# -- contradictions and what fio refuses -------------------------------------------------------------
@pytest.mark.parametrize("index", ["-1", "-7", "7", "x"])
def test_a_list_index_out_of_range_is_refused_not_counted_from_the_end(capsys, index):
    refused(
        capsys,
        ["run", "--set", f"cpu.cstates.{index}.power_w=1", *QUICK],
        f"cpu.cstates.{index} is not a valid list index (0 to 6)",
    )


def test_a_scenario_with_both_a_job_file_and_jobs_is_refused(tmp_path, capsys):
    scen = tmp_path / "both.yaml"
    scen.write_text(
        f"name: both\nplatform: {PLATFORM}\njob_file: {ROOT / 'examples' / 'randread-4k-hipri.fio'}\n"
        "jobs:\n  - name: x\n    rw: randread\n"
    )
    refused(capsys, ["run", "--scenario", str(scen), *QUICK], "either job_file or jobs, not both")


@pytest.mark.parametrize(
    "options, needles",
    [
        ("bs=8k\nsize=4k", ("size (4096 bytes) is smaller than the block size (8192 bytes)",)),
        ("bssplit=16k/50:64k/50\nsize=8k", ("smaller than the block size (16384 bytes)",)),
        ("bs=４k", ("option 'bs'", "U+FF14", "not an ASCII digit")),
        ("rwmixread=５0\nrw=randrw", ("option 'rwmixread'", "U+FF15")),
        ("rate_process=poisson\nrate_iops=１000", ("option 'rate_iops'", "not an ASCII digit")),
    ],
)
def test_what_fio_refuses_is_refused(tmp_path, capsys, options, needles):
    job = tmp_path / "j.fio"
    job.write_text(f"[j]\nrw=randread\ndirect=1\n{options}\n")
    refused(capsys, ["run", str(job), "--platform", PLATFORM, *QUICK], *needles)


def test_a_huge_value_is_named_not_echoed(tmp_path, capsys):
    job = tmp_path / "j.fio"
    job.write_text("[j]\nrw=randread\ndirect=1\nbs=" + "x" * 150_000 + "\n")
    err = refused(capsys, ["run", str(job), "--platform", PLATFORM, *QUICK], "option 'bs'", "(150,002 characters)")
    assert len(err) < 1000
