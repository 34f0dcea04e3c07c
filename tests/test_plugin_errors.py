"""The completion plug-in of docs/completion.md runs with the doc's own command and gives what the
doc says it gives; an exception raised in a user's plug-in ends stacksim with one message naming
the plug-in's file and line, exit status 2, never a traceback (issue 46 blocker 1)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from policies.completion.base import COMPLETION_POLICIES
from simcore.plugins import plugin_error
from stacksim.cli import main
from tests.conftest import run_stacksim_process

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "completion.md"


def doc_plugin_and_command() -> tuple[str, str]:
    """The ```python block of docs/completion.md that registers min-hybrid, and the ```sh command
    that follows it."""
    text = DOC.read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if 'register("min-hybrid")' in b)
    after = text[text.index(code) :]
    command = re.search(r"```sh\n(stacksim run --plugin min_hybrid\.py[^`]*?)```", after, re.S).group(1)
    return code, " ".join(command.replace("\\\n", " ").split())


def test_the_docs_plugin_runs_with_the_docs_command_as_the_doc_says(tmp_path):
    code, command = doc_plugin_and_command()
    (tmp_path / "min_hybrid.py").write_text(code)
    argv = shlex.split(command)
    assert argv[0] == "stacksim"
    out = tmp_path / "run.json"
    run_stacksim_process([*argv[1:], "--quiet", "--json", str(out)], tmp_path)
    s = json.loads(out.read_text())["summary"]
    # the doc: "8.29 us, polling about 1.7 us per IO, one timer interrupt per IO", a sleep per IO
    assert s["completion_policies"] == ["min-hybrid"]
    assert f"{s['latency_us']['mean']:.2f}" == "8.29"
    assert round(s["layers"]["polling"] / 1000, 1) == 1.7
    assert s["hybrid_sleeps_per_io"] == pytest.approx(1.0, abs=0.01)
    assert s["context_switches_per_io"] == pytest.approx(1.0, abs=0.01)


RAISING = """
from policies.completion.base import COMPLETION_POLICIES
from policies.completion.interrupt import InterruptCompletion


@COMPLETION_POLICIES.register({name!r})
class Raising(InterruptCompletion):
    def wait(self, runner, task, req, then):
        {body}
"""


@pytest.fixture
def plugin_file(tmp_path, monkeypatch):
    """Write a plug-in whose ``wait`` runs ``body``; unregister it and forget its module after."""
    made: list[str] = []
    monkeypatch.chdir(tmp_path)

    def write(stem: str, body: str) -> str:
        name = stem.replace("_", "-")
        (tmp_path / f"{stem}.py").write_text(RAISING.format(name=name, body=body))
        made.append(stem)
        return name

    yield write
    for stem in made:
        COMPLETION_POLICIES._items.pop(stem.replace("_", "-"), None)
        sys.modules.pop(f"stacksim_plugin_{stem}", None)


def run_cli(stem: str, name: str, capsys) -> tuple[int, str]:
    rc = main(["run", "--plugin", f"{stem}.py", "--set", f"queue.completion={name}", "--set", "runtime=1ms"])
    return rc, capsys.readouterr().err


def test_an_exception_in_a_plugin_is_one_message_naming_its_file_and_line(plugin_file, capsys):
    name = plugin_file("raising_wait", 'raise RuntimeError("no idea what to do")')
    rc, err = run_cli("raising_wait", name, capsys)
    assert rc == 2
    assert err.strip().splitlines() == [
        "stacksim: error: plug-in raising_wait.py:9 (in wait): RuntimeError: no idea what to do"
    ]


def test_a_bad_call_into_the_model_names_the_plugins_line_and_where_it_was_raised(plugin_file, capsys):
    name = plugin_file("bad_call", "runner.sleep(then, iowait=True, forever=1)")
    rc, err = run_cli("bad_call", name, capsys)
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("stacksim: error: plug-in bad_call.py:9 (in wait)") and "TypeError" in err


def test_an_exception_while_importing_a_plugin_names_its_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_import.py").write_text("x = 1\ny = undefined_name\n")
    rc = main(["run", "--plugin", "broken_import.py"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip() == (
        "stacksim: error: plug-in broken_import.py:2 (in <module>): NameError: "
        "name 'undefined_name' is not defined (while importing it)"
    )


def test_an_error_outside_any_plugin_is_not_blamed_on_one():
    try:
        {}["missing"]
    except KeyError as err:
        assert plugin_error(err) is None
