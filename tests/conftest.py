"""Shared test helpers: small, fast run configurations on the calibrated platform."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from models.platforms import optane900p_e3_1230v5
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options

#: a storage-server sweep small enough for tests: 2 rates x 2 policies, 3 ms simulated per point
TINY_SERVER_SWEEP = """
name: tiny_server
base: {scenario: server-stable}
set: {workload.duration_s: 0.003, workload.warmup_s: 0.001}
axes:
  workload.rate_iops: [40000, 320000]
  server.policy: [spdk-static, sandman]
seed: 5
"""

REPO = Path(__file__).resolve().parents[1]


def run_stacksim_process(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python -m stacksim ARGS`` in a child process run from ``cwd``, the checkout on its import
    path (as for any run from it: its compiled modules' shared library); it must exit 0 with no
    traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "stacksim", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


MODES = {
    "interrupt": dict(io_poll=False, io_poll_delay=-1, hipri="0"),
    "classic": dict(io_poll=True, io_poll_delay=-1, hipri="1"),
    "hybrid": dict(io_poll=True, io_poll_delay=0, hipri="1"),
}


def make_cfg(
    mode: str = "interrupt",
    *,
    threads: int = 1,
    bs: str = "4k",
    rw: str = "randread",
    runtime_ms: int = 50,
    ramp_ms: int = 10,
    seed: int = 3,
    platform=None,
    extra: dict | None = None,
) -> RunConfig:
    plat = platform or optane900p_e3_1230v5()
    m = MODES[mode]
    queue = plat.queue.model_copy(update={"io_poll": m["io_poll"], "io_poll_delay": m["io_poll_delay"]})
    opts = {
        "rw": rw,
        "bs": bs,
        "ioengine": "pvsync2",
        "direct": "1",
        "hipri": m["hipri"],
        "numjobs": str(threads),
        "runtime": f"{runtime_ms}ms",
        "ramp_time": f"{ramp_ms}ms",
        "time_based": "1",
    }
    opts.update(extra or {})
    job = job_from_options(opts, name=f"{mode}")
    return RunConfig(name=f"test-{mode}", platform=plat, queue=queue, jobs=(job,), seed=seed)


@pytest.fixture
def cfg_factory():
    return make_cfg


def composed_platform_file(directory: Path, cpu: str, ssd: str, ssds: int) -> str:
    """A platform composed from presets (``stacksim platform new``'s one socket of ``cpu`` and
    ``ssds`` x ``ssd``), written as YAML in ``directory``; its path."""
    import yaml

    from models.platforms import compose_platform

    platform, _ = compose_platform(cpu, 1, ssd, ssds)
    path = directory / "box.yaml"
    path.write_text(yaml.safe_dump(platform.model_dump(mode="json")))
    return str(path)


@contextmanager
def docs_plugin(doc: str, module: str, registry, name: str, tmp_path: Path):
    """Load the ```python block of ``docs/<doc>`` that starts with ``# <module>.py`` as a plug-in
    (so the docs' example is the tested code), and unregister ``name`` from ``registry`` after."""
    text = (Path(__file__).parent.parent / "docs" / doc).read_text()
    code = re.search(rf"```python\n(# {re.escape(module)}\.py.*?)```", text, re.S).group(1)
    path = tmp_path / f"{module}.py"
    path.write_text(code)
    from simcore.plugins import load_plugin

    try:
        load_plugin(str(path))
        yield
    finally:
        registry._items.pop(name, None)
        sys.modules.pop(f"stacksim_plugin_{module}", None)
