#!/usr/bin/env python3
"""Generate scenarios/data/fio_catalogue.json, fio's option catalogue, from fio's HOWTO.rst.

Development script, not part of the package: the package ships its output. Usage::

    python tools/gen_fio_catalogue.py /path/to/fio/HOWTO.rst > scenarios/data/fio_catalogue.json

Every ``.. option::`` directive of the HOWTO's "Job file parameters" part becomes one entry:
its canonical name, its aliases (the other names of the directive), its value type (the HOWTO's
``=type`` with list/range decorations removed; ``flag`` for a set-type option written without a
value), the default stated in its description (``Default: X``, ``default is X``, ``defaults to
X``; ``null`` when the text states none) and the ioengines it belongs to (``[engine]`` tags of the
directive, or of the first lines of its description, as the HOWTO writes them for ``hipri``);
``null`` engines means a general option. Options of the ``act``/``tiobench`` profiles go under
``profiles``. A handful of aliases that fio's parser (options.c) accepts but the HOWTO does not
mention are added from :data:`EXTRA_ALIASES`, each with its reason.

The HOWTO carries no version number; ``FIO_VERSION`` is set by hand (see its comment).
"""

from __future__ import annotations

import json
import re
import sys

#: fio release whose HOWTO was read. The HOWTO does not state its version: it documents
#: ``sprandom``/``spr_*`` (added in fio 3.41), ``verify_header_seed`` and ``verify_write_sequence``
#: (fio 3.39/3.40) and the io_uring_cmd ``write_mode`` option, the newest options it has.
FIO_VERSION = "3.41"
VERSION_EVIDENCE = (
    "HOWTO.rst has no version string; it documents sprandom/spr_num_regions/spr_op/spr_cs "
    "(introduced in fio 3.41), the newest options it contains"
)

#: Aliases in fio's options.c that the HOWTO does not list (canonical -> aliases).
EXTRA_ALIASES = {
    "nrfiles": ["nr_files"],  # options.c: .alias = "nr_files"
    "runtime": ["timeout"],  # options.c: .alias = "timeout"
    "stonewall": ["wait_for_previous"],
    "rate_min": ["ratemin"],  # options.c: .alias = "ratemin" (fio's examples/1mbs_clients.fio uses it)
}

#: ioengine options that fio's engines register but the HOWTO does not document (name -> type, engines).
EXTRA_OPTIONS = {
    "volume": ("str", ["gfapi", "gfapi_async"]),  # engines/glusterfs.c
    "brick": ("str", ["gfapi", "gfapi_async"]),
    "single-instance": ("bool", ["gfapi", "gfapi_async"]),
    "thp": ("int", ["mmap"]),  # engines/mmap.c
    "svcl": ("str", ["dfs"]),  # engines/dfs.c
    "hdfs_use_direct": ("bool", ["libhdfs"]),  # engines/libhdfs.c
    "single_instance": ("bool", ["libhdfs"]),
}

_DIRECTIVE = re.compile(r"^\.\. option:: (.+?)\s*$")
_TAGS = re.compile(r"^\s*((?:\[[\w, -]+\]\s*)+)$")
_SECTION = re.compile(r"^[~-]{3,}\s*$")
_DEFAULT = re.compile(
    r"(?:Default:|[Tt]he default is|[Dd]efaults to|[Dd]efault value is)\s+"
    r"[`'\"*]*([^\s`'\"*,;]+(?:\s*%)?)"
)


_STOP = {"the", "to", "a", "an", "is", "be", "that", "this", "same", "when", "if", "for", "not"}


def _engines(tags: str) -> list[str]:
    return [e.strip() for t in re.findall(r"\[([^\]]+)\]", tags) for e in t.split(",") if e.strip()]


def _type(syntax: str) -> str:
    if "=" not in syntax:
        return "flag"
    t = syntax.split("=", 1)[1]
    t = re.split(r"[\[,:]", t, maxsplit=1)[0].strip()
    return t or "str"


def parse(text: str) -> dict:
    lines = text.splitlines()
    start = next(i for i, s in enumerate(lines) if s.strip() == "Job file parameters")
    end = next(i for i, s in enumerate(lines) if s.strip() == "Interpreting the output")
    options: dict[str, dict] = {}
    profiles: dict[str, list[dict]] = {}
    section = ""
    for i in range(start, end):
        if i + 1 < end and _SECTION.match(lines[i + 1]) and lines[i].strip():
            section = lines[i].strip()
        m = _DIRECTIVE.match(lines[i])
        if not m:
            continue
        head, _, tags = m.group(1).partition(" : ")
        names = [n.strip() for n in head.split(", ") if n.strip()]
        # a name's own "=type" (e.g. "readwrite=str, rw=str")
        syntax = names[0]
        body: list[str] = []
        for j in range(i + 1, end):
            if _DIRECTIVE.match(lines[j]) or (j + 1 < end and _SECTION.match(lines[j + 1]) and lines[j].strip()):
                break
            body.append(lines[j])
        engines = _engines(tags)
        if not engines:
            first = [b for b in body if b.strip()][:1]
            if first and _TAGS.match(first[0]):
                engines = sorted({e for b in body if _TAGS.match(b) for e in _engines(b)})
        desc = " ".join(b.strip() for b in body)
        dm = _DEFAULT.search(desc)
        default = dm.group(1).rstrip(".") if dm else None
        if default is not None and default.lower() in _STOP:  # "Defaults to the same as iodepth"
            phrase = re.sub(r":option:`([^`<]*?)(?: <[^>]*>)?`", r"\1", desc[dm.start(1) :])
            default = phrase.replace("`", "").split(". ")[0].split(", ")[0].strip()[:80]
        entry = {
            "name": syntax.split("=", 1)[0],
            "aliases": [n.split("=", 1)[0] for n in names[1:]],
            "type": _type(syntax),
            "syntax": head,
            "default": default,
            "engines": engines or None,
            "section": section,
        }
        if section.endswith("profile options"):
            profiles.setdefault(section.split()[0].lower(), []).append(entry)
            continue
        old = options.get(entry["name"])
        if old is not None:  # documented twice (e.g. under two sections): merge
            old["aliases"] = sorted(set(old["aliases"]) | set(entry["aliases"]))
            old["default"] = old["default"] or entry["default"]
            continue
        options[entry["name"]] = entry
    for canonical, extra in EXTRA_ALIASES.items():
        options[canonical]["aliases"] = sorted(set(options[canonical]["aliases"]) | set(extra))
    for name, (etype, engines) in EXTRA_OPTIONS.items():
        options[name] = {
            "name": name,
            "aliases": [],
            "type": etype,
            "syntax": f"{name}={etype}",
            "default": None,
            "engines": engines,
            "section": "not in the HOWTO (options.c)",
        }
    lo = next(i for i, s in enumerate(lines) if s.strip() == "I/O engine")
    hi = next(i for i, s in enumerate(lines) if s.strip() == "I/O engine specific parameters")
    engine_names = sorted(
        {m.group(1) for s in lines[lo:hi] if (m := re.match(r"^\t\t\*\*([a-z0-9_-]+)\*\*\s*$", s))} - {"external"}
    )
    return {
        "fio_version": FIO_VERSION,
        "version_evidence": VERSION_EVIDENCE,
        "source": "fio HOWTO.rst, section 'Job file parameters' (generated by tools/gen_fio_catalogue.py)",
        "ioengines": engine_names,
        "options": sorted(options.values(), key=lambda e: e["name"]),
        "profiles": profiles,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        data = parse(f.read())
    json.dump(data, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
