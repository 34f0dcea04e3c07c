"""fio's job-file value language: ``${VAR}`` environment expansion, reserved keywords and arithmetic.

As fio's HOWTO ("Environment variables", "Reserved keywords", "Job file parameters") defines them:

* ``${VARNAME}`` on the right of ``=`` is replaced by the environment variable's value, or by the
  empty string when it is not set;
* the reserved keywords ``$ncpus``, ``$pagesize`` and ``$mb_memory`` are replaced by the values of
  the (simulated) system: :func:`platform_keywords`;
* a parenthesised expression ``(...)`` in a value is evaluated with ``+ - * / % ^`` (``^`` is
  exponentiation); so is a value with operators once a keyword was replaced (``size=8*$mb_memory``,
  as the HOWTO's example writes it). Numbers may carry units: sizes (``4k``) follow ``kb_base``
  (taken as fio's default 1024 here); in the value of a time option a bare number is in
  microseconds and ``s``/``ms``/``us``/``m``/``h``/``d`` suffixes convert, as the HOWTO says. The
  result is truncated to an integer (fio keeps integer options in integers).
"""

from __future__ import annotations

import ast
import os
import re
from typing import Mapping

from simcore.errors import ConfigError

#: The page size of every modelled platform (x86-64 with 4 KiB pages).
PAGESIZE_BYTES = 4096
KEYWORDS = ("ncpus", "pagesize", "mb_memory")

_ENV = re.compile(r"\$\{([^}]*)\}")
_KEYWORD = re.compile(r"\$([A-Za-z_]\w*)")
_NUMBER = re.compile(r"(0x[0-9a-fA-F]+|\d+(?:\.\d+)?)\s*([A-Za-z]*)")
_SIZE_POW = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_TIME_US = {
    "us": 1,
    "usec": 1,
    "ms": 1000,
    "msec": 1000,
    "s": 10**6,
    "sec": 10**6,
    "m": 60 * 10**6,
    "h": 3600 * 10**6,
    "d": 86400 * 10**6,
}
_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Mod: lambda a, b: a % b,
}
_MAX = 2.0**64


def platform_keywords(logical_cpus: int | None, memory_bytes: int | None = None) -> dict[str, int]:
    """Values of fio's reserved keywords on a simulated platform: ``$ncpus`` = the platform's
    logical CPUs (fio: online CPUs), ``$pagesize`` = :data:`PAGESIZE_BYTES`, ``$mb_memory`` = its
    installed memory in MiB (fio: physical memory / 2^20; none when the platform's
    ``memory_bytes`` is unknown)."""
    out = {"pagesize": PAGESIZE_BYTES}
    if logical_cpus is not None:
        out["ncpus"] = logical_cpus
    if memory_bytes is not None:
        out["mb_memory"] = memory_bytes >> 20
    return out


def value_kind(catalogue_type: str | None) -> str:
    """``time``, ``int`` (numeric: arithmetic is evaluated) or ``str`` for a catalogue type."""
    if catalogue_type is None:
        return "str"
    if "time" in catalogue_type:
        return "time"
    return "int" if catalogue_type.startswith(("int", "irange", "float", "size", "bool")) else "str"


def expand(
    value: str, *, option: str, kind: str, keywords: Mapping[str, int], env: Mapping[str, str] | None = None
) -> str:
    """``value`` with environment variables, keywords and arithmetic expressions replaced;
    ``kind`` from :func:`value_kind` (a ``str`` value keeps parentheses and unknown ``$names``)."""
    environ = os.environ if env is None else env
    text = _ENV.sub(lambda m: environ.get(m.group(1), "") if m.group(1) else "", value)
    replaced = False

    def keyword(m: re.Match[str]) -> str:
        nonlocal replaced
        name = m.group(1)
        if name not in KEYWORDS and kind == "str":
            return m.group(0)
        if name not in KEYWORDS:
            raise ConfigError(
                f"option '{option}': '${name}' is not one of fio's reserved keywords "
                f"({', '.join('$' + k for k in KEYWORDS)}; environment variables are written ${{{name}}})"
            )
        if name not in keywords and kind == "str":
            return m.group(0)  # a string keeps what cannot be replaced
        if name not in keywords:
            why = (
                "the platform's memory size (memory_bytes) is unknown"
                if name == "mb_memory" and "ncpus" in keywords
                else "no platform is known where this job file is read"
            )
            raise ConfigError(f"option '{option}': '${name}' is not modelled yet: {why}; write the value out")
        replaced = True
        return str(keywords[name])

    text = _KEYWORD.sub(keyword, text)
    if replaced and "(" not in text and re.search(r"[-+*/%^]", text) and kind in ("int", "size", "time"):
        text = f"({text})"
    if "(" not in text or kind == "str":
        return text
    return _evaluate_groups(text, option=option, kind=kind)


def _evaluate_groups(text: str, *, option: str, kind: str) -> str:
    """Replace each outermost ``(...)`` of ``text`` by its value."""
    out, depth, start = [], 0, 0
    last = 0
    for i, c in enumerate(text):
        if c == "(":
            if depth == 0:
                out.append(text[last:i])
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"option '{option}': unbalanced ')' in '{text}'")
            if depth == 0:
                out.append(_evaluate(text[start : i + 1], option=option, kind=kind))
                last = i + 1
    if depth:
        raise ConfigError(f"option '{option}': unbalanced '(' in '{text}'")
    out.append(text[last:])
    return "".join(out)


def _number(m: re.Match[str], *, option: str, kind: str, expr: str) -> str:
    digits, unit = m.group(1), m.group(2).lower()
    num = int(digits, 16) if digits.lower().startswith("0x") else float(digits)
    if not unit or unit == "b":
        mult = 1
    elif kind == "time" and unit in _TIME_US:
        mult = _TIME_US[unit]
    elif unit[0] in _SIZE_POW and unit[1:] in ("", "b", "i", "ib"):
        base = 1000 if unit[1:] == "ib" else 1024
        mult = base ** _SIZE_POW[unit[0]]
    else:
        raise ConfigError(f"option '{option}': unknown unit '{m.group(2)}' in expression '{expr}'")
    return repr(num * mult)


def _evaluate(expr: str, *, option: str, kind: str) -> str:
    body = _NUMBER.sub(lambda m: _number(m, option=option, kind=kind, expr=expr), expr)
    try:
        tree = ast.parse(body.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ConfigError(
            f"option '{option}': bad arithmetic expression '{expr}' (numbers, + - * / % ^ and parentheses)"
        ) from None

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and (type(node.op) in _OPS or isinstance(node.op, ast.Pow)):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, (ast.Div, ast.Mod)) and b == 0:
                raise ConfigError(f"option '{option}': division by zero in '{expr}'")
            if isinstance(node.op, ast.Pow):
                try:
                    r = a**b
                except (OverflowError, ZeroDivisionError):
                    raise ConfigError(f"option '{option}': '{expr}' is out of range") from None
            else:
                r = _OPS[type(node.op)](a, b)
            if isinstance(r, complex) or abs(r) > _MAX:
                raise ConfigError(f"option '{option}': '{expr}' is out of range (beyond 64 bits)")
            return r
        raise ConfigError(
            f"option '{option}': bad arithmetic expression '{expr}' (numbers, + - * / % ^ and parentheses)"
        )

    result = int(ev(tree))
    if result < 0:
        raise ConfigError(f"option '{option}': expression '{expr}' is negative ({result})")
    return f"{result}us" if kind == "time" else str(result)
