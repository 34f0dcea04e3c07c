"""The simulation API: one function runs any stacksim configuration and returns a :class:`Result`.

    from scenarios.config.host import resolve
    from scenarios.run.simulate import simulate

    result = simulate(resolve(scenario="default"))
    print(result.summary["iops"], result.summary["latency_us"]["p99"])

A configuration is a :class:`scenarios.config.host.RunConfig` (fio jobs on a Linux host: ``resolve``
builds one from a built-in scenario, a job file or a scenario file, with ``--set`` overrides), a
:class:`scenarios.config.server.ServerRunConfig` (a storage server: :func:`scenarios.config.server.resolve_server`)
or a :class:`scenarios.run.replay.ReplayConfig` (a block trace replayed on a host:
:func:`scenarios.run.replay.resolve_replay`). The CLI, sweeps, calibration, validation and replay all run
through :func:`simulate`.
"""

from __future__ import annotations

import contextlib
import sys
import time

from models.host import Host
from models.ioengines.fio_run import FioRun
from models.ioengines.iostats import IoStats
from models.power import PowerMeter
from scenarios.config.host import RunConfig
from scenarios.config.server import ServerRunConfig
from scenarios.run.assembly import build_run
from scenarios.run.memory import check_run_memory
from scenarios.run.replay import ReplayConfig, run_replay
from scenarios.run.result import Result
from scenarios.run.server import simulate_server
from scenarios.run.summary import Snapshot, summarize_host_run
from simcore.errors import ConfigError
from simcore.plugins import plugin_error
from simcore.progress import RunProgress
from simcore.stats import RecordChunks, record_sink, records_result

__all__ = ["simulate", "Result"]


def simulate(
    config: RunConfig | ServerRunConfig | ReplayConfig,
    *,
    tracer=None,
    records: bool | RecordChunks = False,
    progress: bool | None = False,
    keep_model: bool = False,
) -> Result:
    """Run ``config`` and return its :class:`Result` (same configuration and seed: the same result,
    bit for bit).

    ``tracer``: a :class:`simcore.tracing.ChromeTracer` to fill with the timeline (``result.trace``);
    ``records``: keep one row per measured IO (``result.records``, an array; or, given a
    :class:`simcore.stats.RecordChunks`, stream them into it as the run goes, and ``result.records``
    is that object: host and replay runs); ``progress``: a progress line on
    standard error while it runs (``None``: when standard error is a terminal); ``keep_model``: keep
    the simulated system (``result.model``; a host's with every completed request in
    ``result.model.records``: memory grows with the run; a host run's fio jobs in ``result.run``).
    None of them changes the result. A configuration whose simulated state is estimated to take more
    memory than ``STACKSIM_MAX_MEMORY_BYTES`` is refused before anything is built
    (:mod:`scenarios.run.memory`)."""
    if isinstance(config, (RunConfig, ServerRunConfig, ReplayConfig)):
        check_run_memory(config)
    try:
        with _deep_enough(config):
            if isinstance(config, RunConfig):
                return _simulate_host(config, tracer, records, progress, keep_model)
            if isinstance(config, ServerRunConfig):
                return simulate_server(config, tracer=tracer, records=records, keep_model=keep_model)
            if isinstance(config, ReplayConfig):
                return run_replay(config, progress=progress, records=records, keep_model=keep_model)
    except Exception as err:  # raised in a user's plug-in: one message naming its file and line
        found = plugin_error(err)
        if found is None:
            raise
        raise found from None
    raise ConfigError(
        f"simulate: a {type(config).__name__} is not a configuration (expected RunConfig, "
        "ServerRunConfig or ReplayConfig)"
    )


#: Python frames one exiting thread may hold: a task's exit runs the next task of its CPU inside
#: it (models/os/sched/cfs.py's exit_task -> _schedule -> the task's continuation), so threads that all
#: exit at once (4,096 fio jobs of one IO, a replay's threads at the trace's end) nest their exits
FRAMES_PER_THREAD = 16


@contextlib.contextmanager
def _deep_enough(config):
    """Python's recursion limit raised, while ``config`` runs, to what its threads' exits may nest."""
    threads = sum(j.numjobs for j in getattr(config, "jobs", None) or ())
    settings = getattr(config, "replay", None)
    if settings is not None:
        threads += settings.threads or config.platform.cpu.logical_cpus
    old = sys.getrecursionlimit()
    need = 1000 + FRAMES_PER_THREAD * threads
    if need > old:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _may_end_early(job) -> bool:
    """Whether a fio job can end before its runtime: by size or IO count, or by a steady-state or
    settled latency-target search."""
    return (
        not job.time_based
        or job.runtime_ns is None
        or job.number_ios > 0
        or job.steadystate is not None
        or (job.latency_target_ns > 0 and not job.latency_run)
    )


def _run_jobs(cfg: RunConfig, host: Host, fio: FioRun, ramp: float, end: float) -> float:
    """Run to ``end`` (ns), or, when every job can end early, until the last fio thread exits (as
    fio's runtime ends with its last job); returns the end of the measured interval."""
    if not (all(_may_end_early(j) for j in cfg.jobs) or fio.job_control.deferred):
        host.engine.run(end)
        return end
    from simpy import Event

    done = Event(host.engine.env)
    stop = [end]

    def finish(t: float) -> None:
        if not done.triggered:
            stop[0] = min(max(t, host.engine.now), end)
            done.succeed()

    fio.on_all_exited = finish
    host.engine.call_at(end, finish, end)
    host.engine.run(done)
    if stop[0] <= ramp:  # ended before the measured window began: measure the window as asked
        host.engine.run(end)
        return end
    if host.engine.now < stop[0]:
        host.engine.run(stop[0])
    return stop[0]


def _simulate_host(
    cfg: RunConfig, tracer, records: bool | RecordChunks, progress: bool | None, keep_model: bool
) -> Result:
    """Fio jobs on a host: measured from the end of the ramp to the end of the longest job."""
    wall0 = time.perf_counter()
    host, fio, ramp, end = build_run(cfg, tracer, keep_requests=keep_model)
    sink = record_sink(records)
    stats = IoStats(
        host,
        cfg.jobs,
        ramp,
        end,
        tracer=tracer,
        records=sink,
        control=fio.job_control if fio.job_control.deferred else None,
    )
    if tracer is not None:
        tracer.power_counter(host.engine, host.pkg.power_w, end)
    snap = {}
    host.engine.call_at(ramp, lambda: snap.setdefault("s", Snapshot(host, host.engine.now)))
    meter = PowerMeter(host, cfg.platform.power.meter_hz, ramp, end)
    with RunProgress(end_ns=end, ios=lambda: host.completed_ios, enabled=progress).attached(host.engine):
        end = _run_jobs(cfg, host, fio, ramp, end)
    host.pkg.settle(end)
    wall = time.perf_counter() - wall0
    data = summarize_host_run(cfg, host, snap["s"], stats, end, wall, fio)
    data["power_samples"] = meter.samples
    return Result(
        data,
        records=records_result(records, sink),
        trace=tracer,
        model=host if keep_model else None,
        run=fio if keep_model else None,
    )
