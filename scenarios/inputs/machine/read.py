"""What ``/proc`` and ``/sys`` say about a machine (:func:`read_machine`), as plain facts.

Every file is named by its place in the kernel's documented layout
(Documentation/ABI/testing/sysfs-devices-system-cpu, sysfs-block, sysfs-class-powercap,
sysfs-class-nvme; Documentation/admin-guide/pm/cpuidle.rst and cpufreq.rst; proc(5)). A file that
is absent is a fact too (no cpufreq driver, no cpuidle, no NVMe): the field is None or empty, never
an error. The platform is made of these facts by :mod:`scenarios.config.probe`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scenarios.inputs.machine.tree import SysTree

__all__ = [
    "CPU",
    "CpuFacts",
    "FreqFacts",
    "IdleState",
    "IdleFacts",
    "RaplZone",
    "Namespace",
    "Controller",
    "Machine",
    "read_machine",
    "cpu_list",
]

CPU = "/sys/devices/system/cpu"
QUEUE_ATTRS = ("scheduler", "nr_requests", "max_sectors_kb", "io_poll", "io_poll_delay", "write_cache", "nomerges")


def cpu_list(text: str | None) -> list[int]:
    """A kernel CPU list (``0-3,8,10-11``) as numbers; [] for None or empty."""
    out: list[int] = []
    for part in (text or "").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


@dataclass
class CpuFacts:
    """Topology (``cpuN/topology/*``, ``/sys/devices/system/node``) and ``/proc/cpuinfo``."""

    model: str
    vendor: str = ""
    family: int | None = None
    model_number: int | None = None
    mhz: float | None = None
    #: ``hypervisor`` among /proc/cpuinfo's flags: a guest of a VM (X86_FEATURE_HYPERVISOR)
    hypervisor: bool = False
    online: list[int] = field(default_factory=list)
    #: logical CPU -> (physical_package_id, core_id)
    core_of: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: logical CPU -> its SMT siblings (itself included: thread_siblings_list)
    siblings: dict[int, list[int]] = field(default_factory=dict)
    #: NUMA node -> its CPUs (nodeN/cpulist)
    nodes: dict[int, list[int]] = field(default_factory=dict)

    @property
    def packages(self) -> list[int]:
        return sorted({p for p, _ in self.core_of.values()})

    def cores_of(self, package: int) -> set[int]:
        return {c for p, c in self.core_of.values() if p == package}

    def package_of_node(self, node: int) -> int | None:
        """The package (socket) of NUMA node ``node``'s first CPU."""
        cpus = [c for c in self.nodes.get(node, []) if c in self.core_of]
        return self.core_of[cpus[0]][0] if cpus else None


@dataclass
class FreqFacts:
    """cpufreq of the first online CPU (``cpuN/cpufreq/*``; frequencies in kHz, latency in ns)."""

    driver: str | None = None
    governor: str | None = None
    min_khz: int | None = None
    max_khz: int | None = None
    scaling_max_khz: int | None = None
    base_khz: int | None = None
    transition_ns: int | None = None
    #: intel_pstate/no_turbo (None: no such file)
    no_turbo: bool | None = None
    #: cpufreq/boost (None: no such file)
    boost: bool | None = None


@dataclass
class IdleState:
    """One ``cpuN/cpuidle/stateK``: ``latency`` and ``residency`` are in us."""

    name: str
    latency_us: float
    residency_us: float
    disabled: bool
    path: str


@dataclass
class IdleFacts:
    driver: str | None = None
    governor: str | None = None
    states: list[IdleState] = field(default_factory=list)
    #: ``idle=`` on the kernel command line (poll, halt, nomwait), if given
    idle_param: str | None = None


@dataclass
class RaplZone:
    """A package zone of ``/sys/class/powercap/intel-rapl:N``: its long-term limit (PL1) and its
    short-term one (PL2), each with its time window (drivers/powercap/intel_rapl_common.c names
    the constraints ``long_term`` and ``short_term``)."""

    zone: str
    name: str
    enabled: bool
    long_term_w: float | None
    window_us: float | None
    short_term_w: float | None = None
    short_window_us: float | None = None


@dataclass
class Namespace:
    """A namespace's block queue (``/sys/block/nvmeXnY/queue/*``, ``mq/*``)."""

    name: str
    path: str
    size_bytes: int | None = None
    queue: dict[str, str] = field(default_factory=dict)
    iosched: dict[str, str] = field(default_factory=dict)
    #: hardware queues (``mq/N``) and the tags of the first (``mq/0/nr_tags``)
    hw_queues: int = 0
    nr_tags: int | None = None

    @property
    def scheduler(self) -> str | None:
        """The active scheduler: the bracketed name of ``queue/scheduler``."""
        m = re.search(r"\[([^\]]+)\]", self.queue.get("scheduler", ""))
        return m.group(1) if m else (self.queue.get("scheduler") or None)


@dataclass
class Controller:
    """``/sys/class/nvme/nvmeX``: model, PCIe link, NUMA node, namespaces."""

    name: str
    model: str
    transport: str | None = None
    numa_node: int | None = None
    link_gt_s: float | None = None
    link_width: int | None = None
    namespaces: list[Namespace] = field(default_factory=list)


@dataclass
class Machine:
    cpu: CpuFacts
    freq: FreqFacts
    idle: IdleFacts
    rapl: list[RaplZone]
    nvme: list[Controller]
    poll_queues: int | None
    kernel_release: str | None
    memory_bytes: int | None
    #: what the page cache may hold now: MemFree + Active(file) + Inactive(file), bytes (None: not in
    #: /proc/meminfo)
    cache_memory_bytes: int | None
    #: block devices that are not NVMe (a VM's virtio disks, SATA): name -> active scheduler
    other_disks: dict[str, str]


def _cpuinfo(tree: SysTree) -> dict[str, str]:
    """The first processor's ``key: value`` lines of ``/proc/cpuinfo``."""
    out: dict[str, str] = {}
    for line in (tree.text("/proc/cpuinfo") or "").splitlines():
        if not line.strip():
            if out:
                break
            continue
        key, _, value = line.partition(":")
        out.setdefault(key.strip(), value.strip())
    return out


def _int(text: str | None) -> int | None:
    try:
        return int(text, 0) if text is not None else None
    except ValueError:
        return None


def read_cpu(tree: SysTree) -> CpuFacts:
    info = _cpuinfo(tree)
    mhz = info.get("cpu MHz")
    facts = CpuFacts(
        model=re.sub(r"\s+", " ", info.get("model name", "")).strip(),
        vendor=info.get("vendor_id", ""),
        family=_int(info.get("cpu family")),
        model_number=_int(info.get("model")),
        mhz=float(mhz) if mhz and re.fullmatch(r"[\d.]+", mhz) else None,
        hypervisor="hypervisor" in info.get("flags", "").split(),
    )
    online = cpu_list(tree.text(f"{CPU}/online"))
    if not online:
        online = [int(n[3:]) for n in tree.names(CPU, r"cpu\d+")]
    for c in online:
        topo = f"{CPU}/cpu{c}/topology"
        package, core = tree.number(f"{topo}/physical_package_id"), tree.number(f"{topo}/core_id")
        if package is None or core is None:
            continue
        facts.core_of[c] = (package, core)
        facts.siblings[c] = cpu_list(tree.text(f"{topo}/thread_siblings_list")) or [c]
    facts.online = sorted(facts.core_of)
    for node in tree.names("/sys/devices/system/node", r"node\d+"):
        facts.nodes[int(node[4:])] = cpu_list(tree.text(f"/sys/devices/system/node/{node}/cpulist"))
    return facts


def read_freq(tree: SysTree, first: int) -> FreqFacts:
    d = f"{CPU}/cpu{first}/cpufreq"
    no_turbo, boost = tree.number(f"{CPU}/intel_pstate/no_turbo"), tree.number(f"{CPU}/cpufreq/boost")
    return FreqFacts(
        driver=tree.text(f"{d}/scaling_driver"),
        governor=tree.text(f"{d}/scaling_governor"),
        min_khz=tree.number(f"{d}/cpuinfo_min_freq"),
        max_khz=tree.number(f"{d}/cpuinfo_max_freq"),
        scaling_max_khz=tree.number(f"{d}/scaling_max_freq"),
        base_khz=tree.number(f"{d}/base_frequency"),
        transition_ns=tree.number(f"{d}/cpuinfo_transition_latency"),
        no_turbo=None if no_turbo is None else bool(no_turbo),
        boost=None if boost is None else bool(boost),
    )


def read_idle(tree: SysTree, first: int) -> IdleFacts:
    idle = IdleFacts(
        driver=tree.text(f"{CPU}/cpuidle/current_driver"),
        governor=tree.text(f"{CPU}/cpuidle/current_governor") or tree.text(f"{CPU}/cpuidle/current_governor_ro"),
    )
    m = re.search(r"(?:^|\s)idle=(\w+)", tree.text("/proc/cmdline") or "")
    idle.idle_param = m.group(1) if m else None
    d = f"{CPU}/cpu{first}/cpuidle"
    for state in tree.names(d, r"state\d+"):
        p = f"{d}/{state}"
        name, lat, res = tree.text(f"{p}/name"), tree.number(f"{p}/latency"), tree.number(f"{p}/residency")
        if name is None or lat is None or res is None:
            continue
        idle.states.append(IdleState(name, float(lat), float(res), bool(tree.number(f"{p}/disable") or 0), p))
    return idle


def read_rapl(tree: SysTree) -> list[RaplZone]:
    """The package zones (``intel-rapl:N``, named ``package-N``; AMD's RAPL uses the same class)."""
    zones = []
    for zone in tree.names("/sys/class/powercap", r"intel-rapl:\d+"):
        d = f"/sys/class/powercap/{zone}"
        name = tree.text(f"{d}/name") or ""
        if not name.startswith("package"):
            continue
        found: dict[str, tuple] = {}
        for k in range(3):
            kind = tree.text(f"{d}/constraint_{k}_name")
            if kind in ("long_term", "short_term") and kind not in found:
                found[kind] = (
                    tree.number(f"{d}/constraint_{k}_power_limit_uw"),
                    tree.number(f"{d}/constraint_{k}_time_window_us"),
                )
        limit, window = found.get("long_term", (None, None))
        short, short_window = found.get("short_term", (None, None))
        enabled = tree.number(f"{d}/enabled")
        zones.append(
            RaplZone(
                zone,
                name,
                enabled != 0,
                None if limit is None else limit / 1e6,
                None if window is None else float(window),
                None if not short else short / 1e6,
                None if not short_window else float(short_window),
            )
        )
    return zones


def read_namespace(tree: SysTree, ctrl: str, ns: str) -> Namespace:
    """A namespace's queue, from ``/sys/block/NS`` (or, for a multipath path device that is not
    in /sys/block, from the controller's directory)."""
    d = f"/sys/block/{ns}" if tree.exists(f"/sys/block/{ns}") else f"/sys/class/nvme/{ctrl}/{ns}"
    out = Namespace(ns, d)
    size = tree.number(f"{d}/size")
    out.size_bytes = None if size is None else size * 512  # the size attribute counts 512-byte sectors
    for attr in QUEUE_ATTRS:
        value = tree.text(f"{d}/queue/{attr}")
        if value is not None:
            out.queue[attr] = value
    for knob in tree.names(f"{d}/queue/iosched", r"[a-z_0-9]+"):
        value = tree.text(f"{d}/queue/iosched/{knob}")
        if value is not None:
            out.iosched[knob] = value
    hctx = tree.names(f"{d}/mq", r"\d+")
    out.hw_queues = len(hctx)
    out.nr_tags = tree.number(f"{d}/mq/{hctx[0]}/nr_tags") if hctx else None
    return out


def read_nvme(tree: SysTree) -> list[Controller]:
    out = []
    for ctrl in tree.names("/sys/class/nvme", r"nvme\d+"):
        d = f"/sys/class/nvme/{ctrl}"
        speed = re.match(r"[\d.]+", tree.text(f"{d}/device/current_link_speed") or "")
        c = Controller(
            ctrl,
            tree.text(f"{d}/model") or "",
            transport=tree.text(f"{d}/transport"),
            numa_node=tree.number(f"{d}/device/numa_node"),
            link_gt_s=float(speed.group()) if speed else None,
            link_width=tree.number(f"{d}/device/current_link_width"),
        )
        c.namespaces = [read_namespace(tree, ctrl, ns) for ns in tree.names(d, r"nvme\d+(c\d+)?n\d+")]
        out.append(c)
    return out


def _other_disks(tree: SysTree) -> dict[str, str]:
    out = {}
    for disk in tree.names("/sys/block", r"(?!nvme|loop|ram|zram)[a-z]+[a-z0-9]*"):
        sched = re.search(r"\[([^\]]+)\]", tree.text(f"/sys/block/{disk}/queue/scheduler") or "")
        out[disk] = sched.group(1) if sched else "none"
    return out


def read_machine(tree: SysTree) -> Machine:
    """Everything the probe reads, from ``tree``."""
    cpu = read_cpu(tree)
    first = cpu.online[0] if cpu.online else 0
    meminfo = tree.text("/proc/meminfo") or ""
    mem = re.search(r"MemTotal:\s+(\d+)\s*kB", meminfo)
    cache = [
        re.search(rf"^{k}:\s+(\d+)\s*kB", meminfo, re.M) for k in ("MemFree", r"Active\(file\)", r"Inactive\(file\)")
    ]
    release = tree.text("/proc/sys/kernel/osrelease")
    if not release:
        m = re.match(r"Linux version (\S+)", tree.text("/proc/version") or "")
        release = m.group(1) if m else None
    return Machine(
        cpu=cpu,
        freq=read_freq(tree, first),
        idle=read_idle(tree, first),
        rapl=read_rapl(tree),
        nvme=read_nvme(tree),
        poll_queues=tree.number("/sys/module/nvme/parameters/poll_queues"),
        kernel_release=release,
        memory_bytes=int(mem.group(1)) * 1024 if mem else None,
        cache_memory_bytes=sum(int(c.group(1)) for c in cache) * 1024 if all(cache) else None,
        other_disks=_other_disks(tree),
    )
