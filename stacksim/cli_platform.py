"""``stacksim platform new``: a platform file composed from the preset catalogue; and the preset
entries of ``stacksim list`` (one line each; ``stacksim list NAME``: every value with its source)."""

from __future__ import annotations

import textwrap

from stacksim.fileargs import writes

#: headings of the presets in ``stacksim list``
CPU_HEADING = "CPU presets (stacksim platform new --cpu NAME)"
SSD_HEADING = "SSD presets (stacksim platform new --ssd NAME)"
#: overviews of a group of built-in things (``stacksim list presets``)
OVERVIEW_HEADING = "overviews (stacksim list NAME)"


def add_subcommands(subparsers, commands: dict | None = None) -> dict:
    """Add ``platform`` (``platform new``); its handler is added to ``commands`` when given."""
    pl = subparsers.add_parser("platform", help="compose a platform file from the CPU and SSD presets")
    pl_sub = pl.add_subparsers(dest="platform_cmd", required=True, metavar="COMMAND")
    new = pl_sub.add_parser(
        "new",
        help="write a platform YAML of N sockets of a CPU preset and N SSDs of an SSD preset",
        description="Write a platform YAML (for `stacksim run --platform FILE`) of --sockets CPUs of preset"
        " --cpu and --ssds SSDs of preset --ssd (`stacksim list` names them). Its header gives every value's"
        " source; what no preset says (kernel cycle costs, DRAM and board power) is an estimate.",
    )
    new.add_argument("--cpu", required=True, metavar="NAME", help="CPU preset, e.g. xeon-gold-6248r")
    new.add_argument("--sockets", type=int, default=1, metavar="N", help="CPU sockets (default 1)")
    new.add_argument("--ssd", required=True, metavar="NAME", help="SSD preset, e.g. samsung-980pro")
    new.add_argument("--ssds", type=int, default=1, metavar="N", help="SSDs (default 1)")
    new.add_argument(
        "--kernel",
        metavar="X.Y",
        help="Linux release, e.g. 5.15 (gates the IO path's features; default: kernel.version's default)",
    )
    new.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE.yaml",
        type=writes("-o"),
        help="platform file ('-': standard output)",
    )
    handlers = {"platform": cmd_platform}
    if commands is not None:
        commands.update(handlers)
    return handlers


def cmd_platform(args) -> int:
    from models.platforms import compose_platform
    from scenarios.config.platform_file import platform_yaml
    from simcore.outfile import Outputs

    platform, sources = compose_platform(args.cpu, args.sockets, args.ssd, args.ssds, args.kernel)
    header = [
        f"stacksim platform new --cpu {args.cpu} --sockets {args.sockets} --ssd {args.ssd} --ssds {args.ssds}"
        + (f" --kernel {args.kernel}" if args.kernel else ""),
        "Composed from the preset catalogue (docs/presets.md); uncalibrated. Sources of the values",
        "(exact / derived / recalled / estimate; fields not listed keep the model's defaults,",
        "whose descriptions give their sources: stacksim schema platform):",
    ]
    for key, source in sources.items():
        header += textwrap.wrap(f"{key}: {source}", width=110, initial_indent="  ", subsequent_indent="      ")
    with Outputs() as out:
        out.text(args.output, platform_yaml(platform, header="\n".join(header)), what="-o")
    if args.output != "-":
        print(f"{args.output}: platform {platform.name} ({platform.cpu.logical_cpus} CPUs, {args.ssds} SSDs)")
    return 0


def preset_entries() -> dict[str, dict[str, str]]:
    """The presets for ``stacksim list``: {heading: {name: one-line description}}."""
    from models.cpu.presets import CPU_CATALOGUE
    from models.ssd.presets import SSD_CATALOGUE

    return {
        CPU_HEADING: {name: _summary(p) for name, p in CPU_CATALOGUE.items()},
        SSD_HEADING: {name: _summary(p) for name, p in SSD_CATALOGUE.items()},
        OVERVIEW_HEADING: {"presets": "each SSD preset's media and the parts of the device model it uses"},
    }


def describe_overview(name: str) -> bool:
    """Print the overview ``name`` of :data:`OVERVIEW_HEADING` (False: no such overview)."""
    if name != "presets":
        return False
    print("\n".join(device_model_lines()))
    return True


def describers() -> dict:
    """How ``stacksim list NAME`` describes a name under each of these headings: heading -> a
    function of the name that prints it."""
    return {CPU_HEADING: describe_preset, SSD_HEADING: describe_preset, OVERVIEW_HEADING: describe_overview}


def _summary(preset) -> str:
    """A preset's one line: the first sentence of its factory's docstring."""
    doc = " ".join((preset.make.__doc__ or "").split())
    return doc.split(". ")[0].rstrip(".")


def describe_preset(name: str) -> bool:
    """Print preset ``name``'s description and every value it sets with its source (False: no such
    preset)."""
    from models.cpu.presets import CPU_CATALOGUE
    from models.ssd.presets import SSD_CATALOGUE
    from simcore.sources import sourced_rows

    kind, preset = ("CPU", CPU_CATALOGUE.get(name)) if name in CPU_CATALOGUE else ("SSD", SSD_CATALOGUE.get(name))
    if preset is None:
        return False
    print(f"{name}: {kind} preset")
    doc = " ".join((preset.make.__doc__ or "").split())
    print(textwrap.fill(doc, width=100, initial_indent="  ", subsequent_indent="  "))
    rows = sourced_rows(preset.make(), preset.sources)
    rows += [(f"({fact})", str(value), source) for fact, (value, source) in preset.facts.items()]
    width = max(len(r[0]) for r in rows)
    print(f"  {'value':{width}s}  source")
    for field, value, source in rows:
        print(f"  {field:{width}s}  {value}")
        print(textwrap.fill(source, width=100, initial_indent=" " * (width + 4), subsequent_indent=" " * (width + 6)))
    print("  (other fields: the model's defaults; `stacksim schema platform` describes each)")
    return True


def device_model_lines() -> list[str]:
    """``stacksim list presets``: each SSD preset's media and which parts of the device model it
    uses (the NAND media model or a service time per command, read-ahead, DRAM write buffer, SLC
    cache, FTL with garbage collection, flexible data placement, zones), one line each."""
    from models.ssd.presets import SSD_CATALOGUE

    lines = ["SSD presets and their device model (stacksim list NAME for every value and its source):"]
    for name, preset in SSD_CATALOGUE.items():
        d = preset.make()
        media = str(preset.facts.get("media", ("?",))[0])
        m = d.media
        if m is not None:  # the NAND media model (models.ssd.media)
            parts = [
                f"NAND media: {d.parallel_units} dies on {min(m.channels, d.parallel_units)} channels,"
                f" {m.cell.upper()} page types, tR {m.mean_read_ns / 1e3:.1f} us mean"
            ]
        else:  # a service time per command (3D XPoint; a preset fitted that way)
            parts = [f"a service time per command on {d.parallel_units} media units"]
        parts.append("read-ahead" if d.readahead is not None else "no read-ahead (every read to the media)")
        if d.write_buffer is not None:
            parts.append(f"DRAM write buffer {d.write_buffer.size_bytes / 2**20:g} MiB")
        if d.slc_cache is not None:
            parts.append(f"SLC cache {d.slc_cache.size_bytes / 1e9:g} GB then {d.slc_cache.native_write_gb_s:g} GB/s")
        parts.append("FTL + GC" if d.ftl.enabled else "no FTL model (no garbage collection)")
        if d.ftl.enabled and d.ftl.placement_handles > 1:
            parts.append(f"FDP ({d.ftl.placement_handles} reclaim unit handles)")
        if d.zoned is not None:
            parts.append("zoned")
        lines.append(f"  {name:<20} {media}: {', '.join(parts)}")
    return lines
