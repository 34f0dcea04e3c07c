"""The YAML loader of every YAML input (scenarios, platforms, sweeps, ``--set`` values): PyYAML's
safe loader, its C (libyaml) parser when installed (the same documents, ~10x faster), with two
refusals a plain ``yaml.safe_load`` does not make:

- **A key given twice** in one mapping (``jobs:`` twice: YAML says keys are unique, PyYAML keeps
  the last one in silence): refused, naming the key and both lines. Keys that Python takes for one
  (``1`` and ``1.0``, ``true`` and ``1``) count as the same key; keys merged in with ``<<:`` may be
  overridden, as YAML's merge means.
- **An alias expansion past a node budget** (the "billion laughs": 600 bytes of nested aliases name
  a document of billions of nodes, which any walk over the loaded data then expands): the nodes of
  the document with every alias expanded are counted on the parsed node graph, each node once,
  before anything is built from it, and more than ``STACKSIM_MAX_YAML_NODES`` is refused; so is an
  alias that refers to the node that holds it (a recursive document).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from simcore.errors import ConfigError
from simcore.limits import YAML_NODES

__all__ = ["load_yaml", "yaml_errors"]

#: PyYAML's safe loader, its C (libyaml) build when installed
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"
#: what a failed load raises besides ConfigError (the callers' own messages)
yaml_errors = (yaml.YAMLError, RecursionError, ValueError)


class _Loader(_BASE):
    """The safe loader, refusing duplicate keys (see the module docstring)."""

    where = "YAML"

    def construct_mapping(self, node: Node, deep: bool = False) -> dict:
        if isinstance(node, MappingNode):
            self._refuse_duplicates(node)
        return super().construct_mapping(node, deep=deep)

    def _refuse_duplicates(self, node: MappingNode) -> None:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the constructor refuses it with its own message
                continue
            if first is not None:
                raise ConfigError(
                    f"{self.where}: key {_shown(key)} is given twice in one mapping (lines {first} and {line}):"
                    " keep one (YAML keys are unique; the later one would silently replace the earlier)"
                )
            seen[key] = line


def _shown(key: Any) -> str:
    text = repr(key) if not isinstance(key, str) else f"'{key}'"
    return text if len(text) <= 60 else text[:40] + "..."


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return node.value
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def expanded_size(root: Node, most: int) -> int:
    """Nodes of the document under ``root`` with every alias expanded (each shared node counted as
    often as it is referred to), computed visiting each node once; counting stops past ``most``.
    ConfigError for a recursive document (a node that holds an alias of itself)."""
    size: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            busy.discard(key)
            total = 1 + sum(size[id(c)] for c in _children(node))
            size[key] = total
            if total > most:
                return total
            continue
        if key in size:
            continue
        if isinstance(node, ScalarNode):
            size[key] = 1
            continue
        busy.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in busy:
                raise ConfigError("recursive")
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)]


def load_yaml(text: str, where: str) -> Any:
    """The data of the YAML document ``text`` (``where`` names it in messages: a file, ``--set
    KEY``): ConfigError for a duplicate key or an expansion past the node budget; the parser's own
    errors (:data:`yaml_errors`) for the caller to word."""
    loader = _Loader(text)
    loader.where = where
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        most = YAML_NODES.value()
        try:
            n = expanded_size(node, most)
        except ConfigError:
            raise ConfigError(
                f"{where}: an alias refers to the node that holds it (a recursive document): not a configuration"
            ) from None
        if n > most:
            raise ConfigError(
                f"{where}: its aliases expand to more than {most:,} nodes (an alias bomb?) {YAML_NODES.hint()}"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()
