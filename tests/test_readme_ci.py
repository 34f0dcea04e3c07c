"""The README's two set-up commands and CI: the first code block holds exactly two commands,
``.ci/run`` runs exactly those, and the first one works in a copy of the repository with nothing
beside it (so the package needs nothing outside itself, e.g. no reference data next to the
repository). The second command (the test suite) is never run from here: no pytest inside pytest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / ".ci" / "run"
#: set for the child processes: a nested run of this module does nothing
GUARD = "STACKSIM_README_COMMAND_TEST"


def readme_commands() -> list[str]:
    """The non-empty lines of README.md's first fenced code block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    assert m, "README.md has no code block"
    return [line.strip() for line in m.group(1).splitlines() if line.strip()]


def test_readme_first_code_block_has_the_two_set_up_commands():
    cmds = readme_commands()
    assert len(cmds) == 2, cmds
    run, tests = cmds
    assert "stacksim run" in run and "pytest" not in run
    assert "pytest" in tests and '".[test]"' in tests and "stacksim run" not in tests
    for cmd in cmds:
        assert cmd.startswith("python3 -m venv .venv && ")


def test_ci_runs_exactly_the_readme_commands():
    out = subprocess.run(["bash", str(CI), "--print-commands"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == readme_commands()
    # ... and executes them, in order, in the copy (and nothing else that installs or tests)
    body = CI.read_text()
    assert body.count('bash -c "${cmds[0]}"') == 1 and body.count('bash -c "${cmds[1]}"') == 1
    assert body.index('bash -c "${cmds[0]}"') < body.index('bash -c "${cmds[1]}"')
    assert not re.search(r"-m pytest|bin/pytest|^\s*pytest", body, flags=re.M)
    assert 'copy_repo "$work/repo"' in body and 'cd "$work/repo"' in body


def test_ci_refuses_a_readme_without_exactly_two_commands(tmp_path):
    fake = tmp_path / "repo"
    (fake / ".ci").mkdir(parents=True)
    (fake / ".ci" / "run").write_text(CI.read_text())
    (fake / "README.md").write_text("# x\n\n```sh\npython3 -m venv .venv\n```\n")
    out = subprocess.run(
        ["bash", str(fake / ".ci" / "run"), "--print-commands"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "exactly two commands" in out.stderr


@pytest.mark.skipif(os.environ.get(GUARD) == "1", reason="already inside the README-command test")
def test_first_readme_command_works_in_a_clean_copy(tmp_path):
    """The copy is made by ``.ci/run --copy-to``; the venv reuses this interpreter's installed
    packages (instead of downloading them) and ``pip install --no-deps -e .`` installs the copy;
    the rest of the README's first command runs verbatim."""
    pytest.importorskip("wheel", reason="the editable install without build isolation needs the test extra's wheel")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["bash", str(CI), "--copy-to", str(repo)], check=True, timeout=120)
    assert list(tmp_path.iterdir()) == [repo]  # nothing beside it
    assert not (repo / ".venv").exists() and (repo / "scenarios" / "data" / "reference").is_dir()
    assert not list(repo.rglob("*.so")) and not (repo / "simcore" / "_compiled_build.json").exists()  # no build

    parts = [p.strip() for p in readme_commands()[0].split("&&")]
    assert parts[0] == "python3 -m venv .venv"
    assert re.fullmatch(r"\.venv/bin/pip install (-q )?-e \.", parts[1]), parts[1]
    rest = " && ".join(parts[2:])
    assert "stacksim run" in rest and "pytest" not in rest  # no recursion into the test suite

    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env[GUARD] = "1"
    # parts[0] and parts[1], without downloads: a venv whose path includes this interpreter's
    # site-packages directories (plain .pth lines: their own .pth files, e.g. this checkout's
    # editable install, are not processed), then an editable install of the copy
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", ".venv"], cwd=repo, check=True, timeout=120)
    venv_python = repo / ".venv" / "bin" / "python"
    site = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    parents = dict.fromkeys(
        [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
        + [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    )
    (Path(site) / "_parent_site_packages.pth").write_text("".join(f"{p}\n" for p in parents))
    # a machine without a C compiler (CC=false): the compiled hot path fails to build, the install
    # goes on in pure Python (setup.py) and says so (an empty build cache: no build of these sources
    # copied from an earlier install)
    pip = subprocess.run(
        [str(venv_python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e", "."],
        cwd=repo,
        env={**env, "CC": "false", "STACKSIM_BUILD_CACHE": str(tmp_path / "build-cache")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    version = subprocess.run(
        [str(repo / ".venv" / "bin" / "stacksim"), "--version"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0 and "pure Python: not compiled at install" in version.stdout, version

    out = subprocess.run(["bash", "-c", rest], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert re.search(r"IOPS [\d,]+", out.stdout) and "latency us: mean" in out.stdout
    where = subprocess.run(
        [
            str(venv_python),
            "-c",
            "import scenarios.data.reference, stacksim; "
            "print(scenarios.data.reference.__file__); print(stacksim.__file__)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for path in where:  # the copy's code ran, not this checkout's
        assert Path(path).resolve().is_relative_to(repo.resolve()), path
