"""``stacksim calibrate --trace``: fit the SSD's physical media service from a timed trace.

    cal = calibrate_trace("scenarios/data/traces/blkparse_qdc_sample.txt",
                          sets={"replay.hipri": 1, "queue.io_poll": 1})
    cal.values["ssd.read.base_ns"], cal.ci95["ssd.read.base_ns"]
    plat = trace_calibrated_platform(cal, name="my-ssd")     # write with calibrate_cli.write_platform

What is fitted is the device model's own parameters (:class:`models.ssd.config.ServiceConfig`),
per direction: ``base_ns`` (the fixed part: media + controller time of a command of up to 4 KiB),
``per_kib_ns`` (the per-byte part, per KiB beyond 4 KiB) and ``sd_ns`` (the spread: the model
multiplies the service time by a lognormal draw of mean 1 and standard deviation sd_ns / base_ns).
The end-to-end latency is never fitted. The measured **stage** is the part of each IO's life that
is closest to the device:

* blkparse with D events: D->C (driver + device), at any queue depth;
* otherwise (blkparse Q/C, MSR response times, fio latency logs) the whole latency, which is
  only identifiable at queue depth 1 (no queueing behind other IOs of the trace).

The trace is replayed on the platform (as ``validate --trace`` does) and, IO by IO, the model's
**host path** of that stage (the simulated stage minus the simulated media service time: fetch,
link transfer, completion post, interrupt or poll, driver; plus any wait for a busy media unit) is
set against the measured stage (an fio log without issue times gives arrivals to 1 ms only: each
IO is then replayed no earlier than the completion of the one before it, as a depth-1 job issues
them). Per class (direction x size class, :func:`scenarios.studies.trace_compare.size_class`):

    measured service  mean = mean(measured stage) - mean(simulated host path)
                      variance = var(measured stage) - var(simulated host path)

The means are fitted by weighted least squares to ``base_ns + per_kib_ns * (KiB - 4)^+`` (weights
from their standard errors; 95% confidence intervals from the covariance, scaled up by the reduced
chi-square when the classes disagree beyond their errors; within the bounds, base_ns above 0 and
per_kib_ns at least 0: where the covariance's interval would cross one, the profile interval of
the bounded fit), and the spread is the pooled
coefficient of variation times ``base_ns`` (interval by the delta method from the classes' sample
fourth moments). The host path depends a little on the device (a longer wait changes the CPU's
idle state), so the replay is repeated with the fitted values until they move by less than a tenth
of their interval (at most ``MAX_PASSES`` replays).

Refused (ConfigError, exit 2), before any simulation: no class with at least ``MIN_IOS`` IOs; a
trace without dispatch (D) events whose IOs overlap (Little's law: mean IOs in flight = sum of
latencies / span above ``MAX_DEPTH1_INFLIGHT``). A direction without such a class keeps the
platform's values, and ``per_kib_ns`` keeps the platform's value unless two distinct sizes above
4 KiB, or one above and one at or below, were measured; both are reported as not identified.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scenarios.config.host import resolve
from scenarios.inputs.traces.timed import TimedIO, TimedReader, open_timed
from scenarios.run.replay import ReplayConfig, resolve_replay, split_replay_sets
from scenarios.studies.fitting import calibrated_name, check_max_iterations, linear_profile_interval, not_converged
from scenarios.studies.trace_compare import class_label, replay_timed, size_class
from simcore.errors import ConfigError
from simcore.numfmt import signed

__all__ = [
    "TraceCalibration",
    "calibrate_trace",
    "trace_calibrated_platform",
    "format_trace_calibration",
    "MIN_IOS",
    "MAX_DEPTH1_INFLIGHT",
    "MAX_OVERLAP",
    "MAX_PASSES",
]

#: fewest IOs of one class for it to enter the fit
MIN_IOS = 30
#: a trace without D events is depth 1 if its mean IOs in flight stay below this
MAX_DEPTH1_INFLIGHT = 1.05
#: ... and at most this fraction of its IOs arrived while another was in flight (exact arrivals)
MAX_OVERLAP = 0.01
MAX_PASSES = 8
_OPS = ("read", "write")


class _Moments:
    """Streaming count, mean and central moments 2-4 (Welford / Terriberry)."""

    __slots__ = ("n", "mean", "m2", "m3", "m4")

    def __init__(self) -> None:
        self.n, self.mean, self.m2, self.m3, self.m4 = 0, 0.0, 0.0, 0.0, 0.0

    def add(self, x: float) -> None:
        n1 = self.n
        self.n = n = n1 + 1
        delta = x - self.mean
        dn = delta / n
        dn2 = dn * dn
        t1 = delta * dn * n1
        self.mean += dn
        self.m4 += t1 * dn2 * (n * n - 3 * n + 3) + 6 * dn2 * self.m2 - 4 * dn * self.m3
        self.m3 += t1 * dn * (n - 2) - 3 * dn * self.m2
        self.m2 += t1

    @property
    def var(self) -> float:
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0

    @property
    def var_of_var(self) -> float:
        """Sampling variance of the sample variance (any distribution: from the 4th moment)."""
        n = self.n
        if n < 4:
            return math.inf
        mu4, s2 = self.m4 / n, self.var
        return max((mu4 - s2 * s2 * (n - 3) / (n - 1)) / n, 0.0)


@dataclass
class _ClassFit:
    op: str
    size: int
    measured: _Moments = field(default_factory=_Moments)
    host: _Moments = field(default_factory=_Moments)
    extra_kib_sum: float = 0.0

    @property
    def label(self) -> str:
        return class_label(self.op, self.size)

    @property
    def extra_kib(self) -> float:
        return self.extra_kib_sum / max(self.measured.n, 1)

    @property
    def service_mean_ns(self) -> float:
        return self.measured.mean - self.host.mean

    @property
    def service_var(self) -> float:
        return max(self.measured.var - self.host.var, 0.0)

    @property
    def mean_se2(self) -> float:
        n = max(self.measured.n, 1)
        return (self.measured.var + self.host.var) / n


@dataclass
class TraceCalibration:
    """The result: fitted values and 95% intervals (``values``/``ci95`` by dotted platform key),
    what was not identified and why, the per-class table, and how it was obtained."""

    trace: str
    format: str
    stage: str
    platform: str
    sets: dict[str, Any]
    seed: int
    values: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    start: dict[str, float]
    not_identified: dict[str, str]
    classes: list[dict]
    passes: int
    inflight_mean: float
    skipped: dict[str, int]
    bad_lines: int
    #: False when the replays stopped (``max_iterations``) before the values settled
    converged: bool = True

    def as_dict(self) -> dict:
        return {
            "trace": self.trace,
            "format": self.format,
            "stage": self.stage,
            "platform": self.platform,
            "sets": self.sets,
            "seed": self.seed,
            "fitted": {
                k: {"value": v, "ci95": list(self.ci95[k]), "start": self.start[k]} for k, v in self.values.items()
            },
            "not_identified": self.not_identified,
            "classes": self.classes,
            "passes": self.passes,
            "inflight_mean": self.inflight_mean,
            "skipped": self.skipped,
            "bad_lines": self.bad_lines,
            "converged": self.converged,
        }


def _scan(reader: TimedReader) -> tuple[dict[tuple, int], float, float, bool]:
    """One streaming pass: IOs per class, mean IOs in flight (Little's law), the fraction of IOs
    that arrived while another was in flight, and whether the stage is D->C (blkparse with D)."""
    counts: dict[tuple, int] = {}
    lat_sum = 0.0
    first = last = None
    has_d = True
    ends: list[float] = []  # completion times of the IOs in flight (arrival order: a heap suffices)
    overlapped = 0
    for t in reader:
        key = (t.io.op, size_class(t.io.nbytes))
        counts[key] = counts.get(key, 0) + 1
        lat_sum += t.lat_ns
        has_d = has_d and t.d2c_ns is not None
        arrival = t.io.t_ns
        first = arrival if first is None else min(first, arrival)
        end = arrival + t.lat_ns
        last = end if last is None else max(last, end)
        while ends and ends[0] <= arrival:
            heapq.heappop(ends)
        overlapped += bool(ends)
        heapq.heappush(ends, end)
    if not counts:
        raise ConfigError(f"{reader.path}: no timed read/write IO to calibrate from ({reader.describe()})")
    n = sum(counts.values())
    overlap = math.nan if reader.approx_arrivals else overlapped / n
    return counts, lat_sum / max(last - first, 1.0), overlap, has_d and reader.format == "blkparse"


def _check_identifiable(reader: TimedReader, counts: dict, inflight: float, overlap: float, d2c: bool) -> None:
    if not d2c and (inflight > MAX_DEPTH1_INFLIGHT or overlap > MAX_OVERLAP):
        how = (
            f"{overlap:.1%} of the IOs arrived while another was in flight"
            if overlap == overlap
            else f"mean {inflight:.2f} IOs in flight (Little's law; the fio log has no issue times)"
        )
        raise ConfigError(
            f"{reader.path}: cannot identify the device's service time: the trace is not depth 1 ({how}) and has no "
            f"dispatch (D) events, so queueing cannot be told from service. Record blktrace with D and C events "
            f"(blkparse), or run fio with iodepth=1 and one job"
        )
    if not any(n >= MIN_IOS for n in counts.values()):
        have = ", ".join(f"{class_label(op, s)}: {n}" for (op, s), n in sorted(counts.items()))
        raise ConfigError(
            f"{reader.path}: too few IOs per class to calibrate: every direction x size class needs at "
            f"least {MIN_IOS} IOs, this trace has {have}"
        )


class _Depth1:
    """A depth-1 trace whose arrivals are known only to 1 ms (an fio log without issue times): each
    IO arrives no earlier than the previous one completed (a depth-1 job issues the next IO after
    the completion), so rounding does not make the replay queue IOs that never overlapped."""

    def __init__(self, reader: TimedReader) -> None:
        self.reader = reader

    def __getattr__(self, name: str):
        return getattr(self.reader, name)

    def __iter__(self):
        free = -math.inf
        for t in self.reader:
            arrival = max(t.io.t_ns, free)
            free = arrival + t.lat_ns
            yield t if arrival == t.io.t_ns else replace(t, io=t.io.at(int(math.ceil(arrival))))


def _collect(reader: TimedReader, cfg: ReplayConfig, keys: set, d2c: bool) -> dict[tuple, _ClassFit]:
    """Replay once; per fitted class, moments of the measured stage and of the model's host path."""
    fits = {k: _ClassFit(*k) for k in keys}
    blk = reader.format == "blkparse"

    def consume(t: TimedIO, req) -> None:
        c = fits.get((t.io.op, size_class(t.io.nbytes)))
        if c is None:
            return
        if d2c:
            measured, simulated = t.d2c_ns, req.t_reaped - req.t_dispatch
        else:
            measured = t.lat_ns
            simulated = (req.t_reaped if blk else req.t_complete) - req.t_submit
        c.measured.add(measured)
        c.host.add(simulated - req.device_service_ns)
        c.extra_kib_sum += max(0.0, -(-t.io.nbytes // 512) * 512 / 1024.0 - 4.0)

    replay_timed(reader, cfg, consume)
    return fits


# long: weighted least squares with its identifiability cases, interval scaling and spread, in one place
def _fit_direction(
    op: str, classes: list[_ClassFit], current: dict[str, float], tq: float
) -> tuple[dict, dict, dict, dict]:
    """Fit base, per-KiB and spread of one direction; returns (values, ci95, not_identified, half):
    ``half`` is each value's covariance half-width, what the replays settle against (an interval
    cut by a bound is narrower on one side only)."""
    x = np.array([c.extra_kib for c in classes])
    y = np.array([c.service_mean_ns for c in classes])
    w = 1.0 / np.maximum(np.array([c.mean_se2 for c in classes]), 1e-12)
    key = f"ssd.{op}."
    values, ci, missing, half = {}, {}, {}, {}
    distinct = len({round(v, 3) for v in x})
    if distinct >= 2:
        X = np.column_stack([np.ones_like(x), x])
        cov = np.linalg.inv(X.T @ (X * w[:, None]))
        beta = cov @ (X.T @ (w * y))
        dof = len(y) - 2
        chi2 = float(np.sum(w * (y - X @ beta) ** 2))
        if dof > 0:
            cov = cov * max(1.0, chi2 / dof)
        base, per_kib = float(beta[0]), float(beta[1])
        se_base, se_kib = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
        values[key + "per_kib_ns"] = per_kib
        half[key + "per_kib_ns"], half[key + "base_ns"] = tq * se_kib, tq * se_base
        ci[key + "per_kib_ns"] = _within_bounds(X, y, w, 1, per_kib, tq * se_kib)
        ci[key + "base_ns"] = _within_bounds(X, y, w, 0, base, tq * se_base)
    else:
        per_kib = current[key + "per_kib_ns"]
        missing[key + "per_kib_ns"] = (
            f"kept the platform's {per_kib:g}: the {op}s measured have one size class "
            f"({', '.join(c.label for c in classes)}), which cannot separate the "
            f"per-KiB part from the fixed part"
        )
        yy = y - per_kib * x
        base = float(np.sum(w * yy) / np.sum(w))
        se_base = math.sqrt(1.0 / np.sum(w))
        half[key + "base_ns"] = tq * se_base
        ci[key + "base_ns"] = _within_bounds(np.ones((len(yy), 1)), yy, w, 0, base, tq * se_base)
    values[key + "base_ns"] = base
    # spread: the model's service time is m * J, E[J] = 1, sd(J) = sd_ns / base_ns
    n = np.array([c.measured.n for c in classes], dtype=float)
    m = base + per_kib * x
    denom = float(np.sum(n * m * m))
    cv2 = float(np.sum(n * np.array([c.service_var for c in classes]))) / denom
    var_cv2 = float(np.sum(n * n * np.array([c.measured.var_of_var + c.host.var_of_var for c in classes]))) / denom**2
    sd = math.sqrt(max(cv2, 0.0)) * base
    rel_base = se_base / base if base > 0 else 0.0
    se_cv2 = math.sqrt(var_cv2)
    lo_cv = math.sqrt(max(cv2 - tq * se_cv2, 0.0))
    hi_cv = math.sqrt(max(cv2 + tq * se_cv2, 0.0))
    values[key + "sd_ns"] = sd
    lo, hi = lo_cv * base * (1 - tq * rel_base), hi_cv * base * (1 + tq * rel_base)
    half[key + "sd_ns"] = (hi - lo) / 2
    ci[key + "sd_ns"] = (max(lo, 0.0), hi)  # sd_ns >= 0: the lower end cut at the bound (the CV's is)
    return values, ci, missing, half


def _within_bounds(X, y, w, i: int, value: float, half: float) -> tuple[float, float]:
    """The 95% interval of coefficient ``i`` (base_ns, per_kib_ns: both at least 0, the device's
    bounds): ``value +- half`` (the covariance's) where it stays within them, else the profile
    interval of the bounded fit (:func:`scenarios.studies.fitting.linear_profile_interval`), as
    the other calibrations' intervals (:func:`scenarios.studies.fitting.fit`)."""
    if value - half >= 0.0:
        return value - half, value + half
    return linear_profile_interval(X, y, w, i, [0.0] * X.shape[1], half)


def _fit_all(fits: dict[tuple, _ClassFit], current: dict[str, float]) -> tuple[dict, dict, dict, dict]:
    from scipy.stats import t as student_t

    values, ci, missing, half = {}, {}, {}, {}
    n_total = sum(c.measured.n for c in fits.values())
    tq = float(student_t.ppf(0.975, max(n_total - 3, 1)))
    for op in _OPS:
        classes = sorted((c for c in fits.values() if c.op == op), key=lambda c: c.size)
        if not classes:
            for p in ("base_ns", "per_kib_ns", "sd_ns"):
                missing[f"ssd.{op}.{p}"] = (
                    f"kept the platform's {current[f'ssd.{op}.{p}']:g}: no {op} class with at least {MIN_IOS} IOs"
                )
            continue
        v, c, m, h = _fit_direction(op, classes, current, tq)
        values.update(v)
        ci.update(c)
        missing.update(m)
        half.update(h)
    return values, ci, missing, half


def _check_classes(fits: dict[tuple, _ClassFit], trace: str) -> None:
    bad = [c for c in fits.values() if c.service_mean_ns <= 0]
    if bad:
        worst = min(bad, key=lambda c: c.service_mean_ns)
        raise ConfigError(
            f"{trace}: cannot identify the device's service time: for {', '.join(c.label for c in bad)} the model's "
            f"host path alone is longer than the measured stage ({worst.label}: {worst.host.mean / 1e3:.2f} us "
            f"against {worst.measured.mean / 1e3:.2f} us measured). The platform's host (CPU, idle states, kernel "
            f"costs) or the replay settings (--set replay.hipri=1 --set queue.io_poll=1 for polled IO, "
            f"replay.threads) do not match the machine that was traced"
        )


def _checked(values: dict[str, float], ci: dict, missing: dict, trace: str) -> dict[str, float]:
    for key in [k for k in values if k.endswith(".base_ns")]:
        if values[key] <= 0:
            raise ConfigError(
                f"{trace}: the fitted {key} is {values[key]:.0f} ns: the model's host path alone is "
                f"longer than the measured stage. The platform's CPU or kernel costs (or the replay "
                f"settings: --set replay.hipri=1 --set queue.io_poll=1 for polled IO) do not match "
                f"the machine that was traced"
            )
    for key in [k for k in values if k.endswith(".per_kib_ns")]:
        if values[key] < 0:
            missing[key] = (
                f"measured {values[key]:.3g} ns/KiB (interval {ci[key][0]:.3g}..{ci[key][1]:.3g}) < 0: set to 0"
            )
            values[key] = 0.0
    return values


def _class_rows(fits: dict[tuple, _ClassFit], values: dict, current: dict) -> list[dict]:
    rows = []
    for c in sorted(fits.values(), key=lambda c: (c.op, c.size)):
        key = f"ssd.{c.op}."
        base = values.get(key + "base_ns", current[key + "base_ns"])
        per_kib = values.get(key + "per_kib_ns", current[key + "per_kib_ns"])
        model = base + per_kib * c.extra_kib
        rows.append(
            {
                "class": c.label,
                "ios": c.measured.n,
                "measured_stage_us": c.measured.mean / 1e3,
                "model_host_path_us": c.host.mean / 1e3,
                "service_us": c.service_mean_ns / 1e3,
                "service_sd_us": math.sqrt(c.service_var) / 1e3,
                "fitted_service_us": model / 1e3,
                "residual_pct": (model / c.service_mean_ns - 1.0) * 100.0 if c.service_mean_ns > 0 else None,
            }
        )
    return rows


# long: the calibration's passes (scan, refusals, replay, fit, repeat until the host path settles)
def calibrate_trace(
    trace: str,
    fmt: str | None = None,
    *,
    platform: str | None = None,
    sets: dict | None = None,
    seed: int | None = None,
    skip_bad_lines: bool = False,
    echo=None,
    max_iterations: int | None = None,
) -> TraceCalibration:
    """Fit the device's media service per direction to a timed trace (see the module docstring).
    ``sets``: replay and platform ``--set`` keys (as ``stacksim replay`` takes them); ``echo``: a
    callable given one line per replay pass; ``max_iterations``: at most that many replays
    (default :data:`MAX_PASSES`; fewer stop with ``converged`` False, not refused)."""
    passes = MAX_PASSES if check_max_iterations(max_iterations) is None else max_iterations
    reader = open_timed(trace, fmt, skip_bad_lines=skip_bad_lines)
    counts, inflight, overlap, d2c = _scan(reader)
    _check_identifiable(reader, counts, inflight, overlap, d2c)
    keys = {k for k, n in counts.items() if n >= MIN_IOS}
    sets = dict(sets or {})
    cfg = resolve_replay(trace, platform=platform, sets=sets, seed=seed)
    ssd = cfg.platform.ssd
    current = {
        f"ssd.{op}.{p}": float(getattr(getattr(ssd, op), p)) for op in _OPS for p in ("base_ns", "per_kib_ns", "sd_ns")
    }
    fitted: dict[str, float] = {}  # the values the next replay uses
    prev: tuple[dict, dict] | None = None  # (replayed values, their fit) of the pass before
    converged = True
    for npass in range(1, passes + 1):
        if npass > 1:
            cfg = resolve_replay(trace, platform=platform, sets={**sets, **fitted}, seed=seed)
        fits = _collect(_Depth1(reader) if reader.approx_arrivals and not d2c else reader, cfg, keys, d2c)
        if prev is not None and any(c.service_mean_ns <= 0 for c in fits.values()):
            # overshoot: at these values the waits for busy media units alone exceed the measured
            # stage; step back half-way towards the values replayed before
            fitted = {k: (v + prev[0][k]) / 2 for k, v in fitted.items()}
            continue
        _check_classes(fits, trace)
        values, ci, missing, half = _fit_all(fits, current)
        values = _checked(values, ci, missing, trace)
        settled = bool(fitted) and all(abs(values[k] - fitted[k]) <= 0.1 * half[k] + 1e-9 for k in values)
        if echo is not None:
            echo(f"pass {npass}: " + "  ".join(f"{k}={v:.1f}" for k, v in values.items()))
        moved = fitted and {k: abs(values[k] - fitted[k]) / max(half[k], 1e-9) for k in values}
        if settled:
            fitted = values
            break
        replayed = fitted or {k: current[k] for k in values}
        fitted_next = _next_values(replayed, values, prev)
        prev = (replayed, values)
        fitted = fitted_next
    else:
        converged = False
        if passes >= MAX_PASSES and moved and max(moved.values()) > 1.0:
            worst = max(moved, key=moved.get)
            raise ConfigError(
                f"{trace}: the calibration does not settle: after {passes} replays {worst} still moves by "
                f"{moved[worst]:.1f} times its 95% interval between replays, so the model's host path depends on the "
                f"device's parameters more than this trace pins them down (for example the CPUs' idle states while "
                f"waiting); the host platform or the replay settings do not match the traced machine"
            )
    dropped = {class_label(*k): n for k, n in counts.items() if n < MIN_IOS}
    if dropped:
        missing["classes"] = "not used (fewer than %d IOs): %s" % (
            MIN_IOS,
            ", ".join(f"{k} ({n})" for k, n in sorted(dropped.items())),
        )
    return TraceCalibration(
        trace=str(trace),
        format=reader.format,
        stage="D->C" if d2c else ("Q->C" if reader.format == "blkparse" else "latency"),
        platform=cfg.platform.name if platform is None else str(platform),
        sets=sets,
        seed=cfg.seed,
        values=fitted,
        ci95=ci,
        start={k: current[k] for k in fitted},
        not_identified=missing,
        classes=_class_rows(fits, fitted, current),
        passes=npass,
        inflight_mean=inflight,
        skipped=dict(reader.skipped),
        converged=converged,
        bad_lines=reader.bad_lines,
    )


def _next_values(replayed: dict, fit: dict, prev: tuple[dict, dict] | None) -> dict:
    """The device values of the next replay. The fit of a replay is the measured stage minus the
    model's host path at the replayed values; at depth > 1 that host path includes the waits for
    busy media units, which grow with the service time, so simply replaying the fit can overshoot
    and oscillate. Per value, a secant step on (fit - replayed) = 0 from the last two replays
    (half-way to the fit on the first, the fit itself when the secant is degenerate or leaves
    (0, 2 x fit))."""
    if prev is None:  # half-way: the first replay's waits (at the platform's device) may be far off
        return {k: (f + replayed[k]) / 2 for k, f in fit.items()}
    x0, f0 = prev
    out = {}
    for k, f1 in fit.items():
        x1 = replayed[k]
        r1, r0 = f1 - x1, f0.get(k, x0.get(k, x1)) - x0.get(k, x1)
        dx = x1 - x0.get(k, x1)
        step = f1
        if r1 != r0 and dx != 0.0:
            step = x1 - r1 * dx / (r1 - r0)
        out[k] = step if 0.0 < step < 2.0 * max(f1, x1) else f1
    return out


def trace_calibrated_platform(cal: TraceCalibration, name: str | None = None):
    """The platform the trace was replayed on (with its platform ``--set`` keys) with the fitted
    device service, renamed (default ``BASE-calibrated``) and with a ``calibration`` note."""
    _, platform_sets = split_replay_sets(cal.sets)
    platform_sets = {k: v for k, v in platform_sets.items() if not k.startswith("queue.")}
    fitted = {k: float(f"{v:.6g}") for k, v in cal.values.items()}
    plat = resolve(platform=cal.platform, sets={**platform_sets, **fitted}).platform
    fits = ", ".join(f"{k}={fitted[k]:g} (95% CI {cal.ci95[k][0]:.4g}..{cal.ci95[k][1]:.4g})" for k in fitted)
    note = (
        f"stacksim calibrate --trace: from {plat.name}; device media service fitted to the {cal.stage} times of "
        f"{cal.trace} ({cal.format}, {sum(c['ios'] for c in cal.classes)} IOs, seed {cal.seed}, "
        f"{cal.passes} replays): {fits}."
    )
    if plat.calibration:
        note += f" Base platform's calibration: {plat.calibration}"
    return plat.model_copy(
        update={
            "name": name or calibrated_name(plat.name),
            "calibration": note,
            "description": f"{plat.description} -- device calibrated by stacksim calibrate --trace".strip(" -"),
        }
    )


def format_trace_calibration(cal: TraceCalibration) -> str:
    lines = [
        f"calibrate --trace {cal.trace} ({cal.format}): fitted the device's media service to the {cal.stage} "
        f"times on {cal.platform} (seed {cal.seed}; {cal.passes} replays; mean IOs in flight {cal.inflight_mean:.2f})",
        f"  {'class':10s} {'IOs':>6s} {'measured':>10s} {'host path':>10s} {'service':>10s} {'sd':>9s} "
        f"{'fitted':>10s} {'resid':>8s}   (us; host path = the model's stage minus its media time)",
    ]
    for r in cal.classes:
        res = "-" if r["residual_pct"] is None else signed(r["residual_pct"]) + "%"
        lines.append(
            f"  {r['class']:10s} {r['ios']:6d} {r['measured_stage_us']:10.3f} {r['model_host_path_us']:10.3f} "
            f"{r['service_us']:10.3f} {r['service_sd_us']:9.3f} {r['fitted_service_us']:10.3f} {res:>8s}"
        )
    if not cal.converged:
        lines.append(f"NOTE: {not_converged(cal.passes, 'trace')}")
    lines.append(f"  {'parameter':22s} {'platform':>10s} {'fitted':>10s}  95% confidence interval")
    for k, v in cal.values.items():
        lo, hi = cal.ci95[k]
        lines.append(f"  {k:22s} {cal.start[k]:10.1f} {v:10.1f}  [{lo:.1f}, {hi:.1f}]")
    for k, why in cal.not_identified.items():
        lines.append(f"  not identified: {k}: {why}")
    return "\n".join(lines)
