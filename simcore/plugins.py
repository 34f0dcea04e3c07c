"""Plug-in registries: policies register under a name; users add one in a single module.

A user module (``--plugin my_policy.py`` or ``plugins: [my_policy.py]`` in a scenario) is
imported before the run; its ``@REGISTRY.register("name")`` decorators make the policy selectable
by name, with no change to the models. A plug-in is Python code that runs with the user's rights:
load only plug-ins you trust. Where paths are resolved from: :func:`load_plugin`.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import sys
import traceback
from pathlib import Path

from simcore.config import Model, NoParams, validate
from simcore.errors import ConfigError

#: the source files of the plug-ins loaded in this process: resolved path -> the name the user gave
_SOURCES: dict[str, str] = {}


def plugin_error(err: BaseException) -> ConfigError | None:
    """The one message for ``err`` when it was raised in a loaded plug-in's code (None: it was not):
    the plug-in as the user named it, the line and function of its innermost frame, the exception;
    and where it was finally raised when that is outside the plug-in (a model call it made)."""
    if isinstance(err, ConfigError):
        return None
    frames = traceback.extract_tb(err.__traceback__)
    mine = [i for i, f in enumerate(frames) if f.filename in _SOURCES]
    if not mine:
        return None
    f = frames[mine[-1]]
    where = f"plug-in {_SOURCES[f.filename]}:{f.lineno} (in {f.name})"
    last = frames[-1]
    if mine[-1] != len(frames) - 1:
        where += f", raised in {Path(last.filename).name}:{last.lineno}"
    return ConfigError(f"{where}: {type(err).__name__}: {err}")


class Parametrised:
    """Base of a plug-in configured by a pydantic ``Params`` model (its tunables; no tunables:
    :class:`~simcore.config.NoParams`), validated with errors that name the plug-in and key."""

    name = "abstract"
    Params: type[Model] = NoParams

    @classmethod
    def params_from(cls, data: dict, where: str) -> Model:
        """``data`` validated by ``cls.Params``; ``where`` names the setting in errors."""
        return validate(cls.Params, dict(data), where=where)


class Registry:
    """Name -> class registry for one kind of policy."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, type] = {}

    def register(self, name: str):
        def deco(cls):
            if name in self._items and self._items[name] is not cls:
                raise ValueError(f"{self.kind} '{name}' registered twice")
            self._items[name] = cls
            cls.name = name
            return cls

        return deco

    def get(self, name: str) -> type:
        try:
            return self._items[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._items, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"unknown {self.kind} '{name}' (known: {', '.join(sorted(self._items))}){hint}") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: str) -> bool:
        return name in self._items


def load_plugin(spec: str) -> None:
    """Import a plug-in: a ``.py`` file path or a dotted module name. A plug-in is ordinary Python
    code and runs with the user's rights, as any import does.

    A file path is taken as given: relative to the current directory (a scenario's ``plugins:``
    entries are made relative to the scenario file by :func:`scenarios.config.host.resolve`). It is
    imported once as ``stacksim_plugin_<stem>`` (another file with the same stem gets a name with
    a hash of its path, so neither shadows the other). A module name is imported from Python's
    import path (``sys.path``: installed packages, ``PYTHONPATH``), not from the current directory.
    """
    if spec.endswith(".py"):
        path = Path(spec)
        if not path.is_file():
            raise ConfigError(f"plug-in file not found: {spec}")
        real = path.resolve()
        mod_name = f"stacksim_plugin_{path.stem}"
        loaded = sys.modules.get(mod_name)
        if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() != real:
            mod_name = f"{mod_name}_{hashlib.sha256(str(real).encode()).hexdigest()[:8]}"
            loaded = sys.modules.get(mod_name)
        if loaded is not None:
            return
        loader_spec = importlib.util.spec_from_file_location(mod_name, real)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[mod_name] = module
        _SOURCES[str(real)] = spec
        try:
            loader_spec.loader.exec_module(module)
        except SystemExit as err:  # sys.exit() in a plug-in must not end stacksim quietly, whatever its code
            del sys.modules[mod_name]
            raise ConfigError(f"plug-in {spec} called sys.exit({err.code!r}) while loading") from None
        except Exception as err:  # a user's module: report, don't crash
            del sys.modules[mod_name]
            found = plugin_error(err)  # names the line: plug-in SPEC:LINE (in <module>): ...
            raise ConfigError(
                f"{found or f'plug-in {spec}: {type(err).__name__}: {err}'} (while importing it)"
            ) from None
    else:
        try:
            importlib.import_module(spec)
        except ImportError as err:
            hint = f" (for the file {spec}.py here, give --plugin {spec}.py)" if Path(f"{spec}.py").is_file() else ""
            raise ConfigError(f"plug-in module '{spec}' not importable: {err}{hint}") from None
        except SystemExit as err:
            sys.modules.pop(spec, None)
            raise ConfigError(f"plug-in module '{spec}' called sys.exit({err.code!r}) while loading") from None
        except Exception as err:  # a user's module: report, don't crash
            raise ConfigError(f"plug-in module '{spec}' failed to import: {type(err).__name__}: {err}") from None
        for name, mod in list(sys.modules.items()):  # the module and, for a package, its submodules
            source = getattr(mod, "__file__", None)
            if source and (name == spec or name.startswith(spec + ".")):
                _SOURCES[str(Path(source).resolve())] = f"{spec} ({Path(source).name})"
