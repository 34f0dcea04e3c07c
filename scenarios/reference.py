"""Where the published calibration figures live: ``$STACKSIM_REFERENCE`` if set, else the
``shared/reference`` directory beside the repository (how the project and CI are laid out)."""

from __future__ import annotations

import os
from pathlib import Path

from simcore.errors import ConfigError


def reference_dir() -> Path:
    env = os.environ.get("STACKSIM_REFERENCE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "reference"


def calibration_file(name: str) -> Path:
    """Path of ``calibration/NAME``; a clear error if the reference set is not there."""
    path = reference_dir() / "calibration" / name
    if not path.is_file():
        raise ConfigError(f"calibration reference not found: {path} (set STACKSIM_REFERENCE to the shared/reference directory)")
    return path
