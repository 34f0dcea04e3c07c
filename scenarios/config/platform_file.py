"""Platforms by name or from a YAML/JSON file, and writing a platform file.

``--platform`` accepts a built-in name (``models.platforms.PLATFORMS``) or the path of a platform
file: the full :class:`~models.platform.PlatformConfig` as YAML (or JSON), as ``stacksim
calibrate`` writes it (``stacksim schema platform`` gives its JSON schema). A typo in a key is an
error naming the key and the file.

This module imports neither :mod:`scenarios.config.host` nor the simulator, so the scenario
resolver can use :func:`load_platform` without an import cycle.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from models.platform import PlatformConfig
from models.platforms import PLATFORMS
from simcore.config import load_data_file, refuse_ambiguous, validate
from simcore.errors import ConfigError

__all__ = ["load_platform", "platform_yaml", "PLATFORM_FILE_SUFFIXES"]

PLATFORM_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def load_platform(name_or_path: str) -> PlatformConfig:
    """The built-in platform ``name_or_path``, else the platform file at that path."""
    refuse_ambiguous(name_or_path, PLATFORMS, "platform")
    if name_or_path in PLATFORMS:
        return PLATFORMS[name_or_path]()
    path = Path(name_or_path)
    if path.suffix.lower() in PLATFORM_FILE_SUFFIXES or path.exists():
        if not path.exists():  # (a directory, device or FIFO is the reader's to name)
            raise ConfigError(f"platform file not found: {path}")
        data = load_data_file(path)
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path}: a platform file must be a mapping of PlatformConfig keys "
                f"(see `stacksim schema platform`), got {type(data).__name__}"
            )
        return validate(PlatformConfig, data, where=str(path))
    raise ConfigError(
        f"unknown platform '{name_or_path}' (known: {', '.join(sorted(PLATFORMS))}; or a platform .yaml file)"
    )


def platform_yaml(platform: PlatformConfig, header: str = "") -> str:
    """``platform`` as a YAML document that :func:`load_platform` reads back unchanged;
    ``header`` lines are written first as ``#`` comments."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    body = yaml.safe_dump(platform.model_dump(mode="json"), sort_keys=False, width=100)
    return "\n".join(lines + [body]) if lines else body
