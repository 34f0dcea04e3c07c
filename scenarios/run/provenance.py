"""What a run's ``--json`` records so that it can be told apart from another and run again
(``stacksim run --rerun OUT.json``): the command line, its inputs (each file's path, SHA-256 and, for
a regular file up to :data:`KEEP_TEXT_BYTES`, its text), the fully resolved configuration (every
platform, queue and job value the run used, after ``--set``), the seed, and the code (version,
compiled or pure, SHA-256 of the package's sources).

A rerun simulates the recorded configuration, not the inputs as they are now: an edited job file or
platform YAML does not change it. What the configuration cannot hold is checked instead: a plug-in
whose file changed is refused, and different code is said on stderr (the results may then differ).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from scenarios.config.host import RunConfig
from scenarios.config.server import ServerRunConfig
from simcore.bounded import parse_json
from simcore.compiled import describe, package_version
from simcore.config import read_text_file, validate
from simcore.errors import ConfigError
from simcore.fingerprint import packages_sha

__all__ = ["KEEP_TEXT_BYTES", "code_identity", "file_record", "provenance", "load_rerun", "Rerun"]

#: an input file's text is kept in the JSON up to this size (bytes); a larger one by its hash only
KEEP_TEXT_BYTES = 1 << 20
_CONFIGS: dict[str, type[RunConfig] | type[ServerRunConfig]] = {"host": RunConfig, "server": ServerRunConfig}


def code_identity() -> dict[str, str]:
    """The code that ran: version, compiled or pure (and why), the SHA-256 of the packages' Python
    sources (:func:`simcore.fingerprint.packages_sha`, what sweeps key their stored runs on)."""
    return {"version": package_version(), "code": describe(), "source_sha256": packages_sha()}


def file_record(path: str | os.PathLike) -> dict[str, Any]:
    """An input file as recorded: its path, and for a regular file its SHA-256 and (when at most
    :data:`KEEP_TEXT_BYTES`) its text; a FIFO or device is not read again (it was consumed)."""
    p = Path(path)
    rec: dict[str, Any] = {"path": str(path)}
    try:
        if not p.is_file():
            rec["note"] = "not a regular file: not recorded"
            return rec
        data = p.read_bytes() if p.stat().st_size <= KEEP_TEXT_BYTES else None
    except OSError as e:
        rec["note"] = f"unreadable after the run: {e.strerror or e}"
        return rec
    if data is None:
        h = hashlib.sha256()
        with p.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        rec["sha256"] = h.hexdigest()
        rec["note"] = f"over {KEEP_TEXT_BYTES} bytes: text not kept"
        return rec
    rec["sha256"] = hashlib.sha256(data).hexdigest()
    try:
        rec["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        rec["note"] = "not UTF-8 text: text not kept"
    return rec


def provenance(
    cfg: RunConfig | ServerRunConfig, *, argv: list[str], inputs: dict[str, Any], cli_plugins: list[str] = ()
) -> dict[str, Any]:
    """The ``provenance`` section of a run's JSON (see the module docstring); ``cli_plugins``: the
    ``--plugin`` files loaded before the run (the configuration's own are in ``config.plugins``)."""
    return {
        "argv": list(argv),
        "inputs": inputs,
        "kind": cfg.kind,
        "seed": cfg.seed,
        "config": cfg.model_dump(mode="json"),
        "plugins": [file_record(p) for p in cfg.plugins if p.endswith(".py")],
        "cli_plugins": [file_record(p) for p in cli_plugins],
        **code_identity(),
    }


class Rerun:
    """A recorded run read back (:func:`load_rerun`): its configuration, its provenance, and what
    differs from the code that runs it now (``warnings``)."""

    def __init__(self, path: str, cfg: RunConfig | ServerRunConfig, record: dict[str, Any], warnings: list[str]):
        self.path = path
        self.cfg = cfg
        self.record = record
        self.warnings = warnings

    @property
    def cli_plugins(self) -> list[str]:
        """The ``--plugin`` files the recorded run loaded (checked unchanged), to load again."""
        return [str(p.get("path")) for p in self.record.get("cli_plugins") or [] if isinstance(p, dict)]

    @property
    def plugins(self) -> list[str]:
        """Every plug-in the rerun would run (Python code named by the results file): the recorded
        ``--plugin`` ones and the configuration's own ``plugins``, each once."""
        return list(dict.fromkeys([*self.cli_plugins, *self.cfg.plugins]))


def load_rerun(path: str) -> Rerun:
    """Read ``path`` (a ``stacksim run --json`` output) for a rerun; ConfigError when it cannot be
    rerun as recorded (no provenance, a bad configuration, a plug-in that changed)."""
    doc = parse_json(read_text_file(path, what="--rerun file"), f"--rerun {path}", unique_keys=True)
    rec = doc.get("provenance") if isinstance(doc, dict) else None
    if not isinstance(rec, dict) or not isinstance(rec.get("config"), dict):
        raise ConfigError(
            f"--rerun {path}: no 'provenance' with the run's configuration (write one with stacksim run --json)"
        )
    kind = rec.get("kind")
    if kind not in _CONFIGS:
        raise ConfigError(f"--rerun {path}: provenance.kind {kind!r} is not one of {', '.join(_CONFIGS)}")
    cfg = validate(_CONFIGS[kind], rec["config"], where=f"{path}: provenance.config")
    for field in ("plugins", "cli_plugins"):
        items = rec.get(field) or []
        if not isinstance(items, list) or not all(
            isinstance(p, dict) and isinstance(p.get("path"), str) for p in items
        ):
            raise ConfigError(f"--rerun {path}: provenance.{field} is not a list of file records (damaged or edited)")
    if not isinstance(rec.get("inputs", {}), dict):
        raise ConfigError(f"--rerun {path}: provenance.inputs is not a mapping (damaged or edited)")
    for plugin in [*(rec.get("plugins") or []), *(rec.get("cli_plugins") or [])]:
        now = file_record(plugin["path"])
        if now.get("sha256") != plugin.get("sha256"):
            raise ConfigError(
                f"--rerun {path}: plug-in {plugin.get('path')} changed since the run (or is gone): "
                "its code is part of the result; restore it to rerun"
            )
    warnings = []
    here = code_identity()
    if rec.get("source_sha256") != here["source_sha256"]:
        warnings.append(
            f"{path} was written by other code (stacksim {rec.get('version')}, sources "
            f"{str(rec.get('source_sha256'))[:12]}; this is {here['version']}, {here['source_sha256'][:12]}):"
            " the rerun may differ"
        )
    return Rerun(path, cfg, rec, warnings)
