"""``stacksim probe``: a platform from /proc and /sys, on saved trees written by hand from the kernel's
documented sysfs layout (tests/data/probe/make_trees.py says which documents), and on this machine."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from models.platforms import PLATFORMS
from models.ssd.presets import SSD_PRESETS, optane_p4800x, pm1743
from scenarios.config.platform_file import load_platform, platform_yaml
from scenarios.config.preset_match import generation, match_name, nearest_cpu, reported_name, words
from scenarios.config.probe import NoNvmeError, pcie_gb_s, probe_platform
from scenarios.inputs.machine.read import read_machine
from scenarios.inputs.machine.tree import SysTree
from stacksim.cli import main

TREES = Path(__file__).resolve().parent / "data" / "probe"
SHORT = ["--set", "runtime=2ms", "--set", "ramp_time=0"]


def probe(tree: str | Path, **kw):
    return probe_platform(read_machine(SysTree(TREES / tree if isinstance(tree, str) else tree)), **kw)


def cli(args, capsys):
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_two_socket_xeon_is_read_as_the_machine_is():
    p = probe("xeon2s").platform
    cpu = p.cpu
    assert (cpu.sockets, cpu.physical_cores, cpu.smt, cpu.logical_cpus) == (2, 10, True, 40)
    assert (cpu.min_freq_ghz, cpu.base_freq_ghz, cpu.max_freq_ghz, cpu.turbo) == (1.0, 2.4, 3.2, True)
    # intel_pstate's active-mode powersave follows utilisation: not the model's powersave (the minimum)
    assert cpu.cpufreq_governor == "schedutil"
    assert [(s.name, s.exit_latency_ns, s.target_residency_ns) for s in cpu.cstates] == [
        ("POLL", 0.0, 0.0),
        ("C1", 2000.0, 2000.0),
        ("C1E", 10000.0, 20000.0),
        ("C6", 133000.0, 600000.0),
    ]
    assert cpu.cstates[0].polling and not any(s.polling for s in cpu.cstates[1:])
    assert (cpu.power_limit_w, cpu.power_limit_window_ms) == (100.0, 999.424)
    assert (cpu.pl2_w, cpu.pl2_window_ms) == (120.0, 2.44)  # powercap's short_term constraint
    assert p.kernel.version == "5.15" and p.memory_bytes == 196438880 * 1024
    # the P4800X reports its part number; its service times are the preset's, its queues this host's
    assert (p.ssd_count, p.ssd_nodes) == (1, (1,))
    assert p.ssd.read == optane_p4800x().read and p.ssd.model == "INTEL SSDPE21K375GA"
    assert (p.ssd.max_queue_pairs, p.ssd.max_queue_depth, p.ssd.capacity_bytes) == (32, 1024, 732_585_168 * 512)
    assert (p.queue.scheduler, p.queue.io_poll, p.queue.nr_requests) == ("none", False, 1023)


def test_desktop_reads_two_nvme_poll_queues_and_a_disabled_state():
    probed = probe("desktop")
    p = probed.platform
    assert p.ssd_count == 2 and p.ssd_nodes == ()
    # 26 hardware queues, of which nvme's poll_queues=2 are polled: 24 interrupt-driven queue pairs
    assert p.ssd.max_queue_pairs == 24 and p.queue.io_poll and p.queue.io_poll_delay == -1
    assert [s.name for s in p.cpu.cstates] == ["POLL", "C1E", "C6", "C8", "C10"]
    assert p.cpu.cpuidle_disable == ("C10",)
    # the hybrid CPU: 8 of 16 cores with SMT; the model's cores are identical, and it says so
    assert p.cpu.physical_cores == 16 and not p.cpu.smt
    assert any("8 of 16 cores have SMT" in n for n in probed.notes)
    # nvme0's 16 GT/s x4 link bounds the device's link whatever preset fills in the rest
    assert p.ssd.link_gb_s <= pcie_gb_s(16.0, 4) + 1e-9
    assert any("PCIe links differ" in n for n in probed.notes)  # nvme1 is on a PCIe 3.0 link
    assert p.kernel.version == "6.8" and p.cpu.cpufreq_governor == "performance"


def test_one_ssd_model_and_local_devices_only(tmp_path):
    """A platform has one SSD model: of two models the probe keeps one and names the other; an NVMe
    over fabrics controller is not a local SSD."""
    tree = tmp_path / "desktop"
    shutil.copytree(TREES / "desktop", tree)
    (tree / "sys/class/nvme/nvme1/model").write_text("WD_BLACK SN850X 1000GB\n")
    probed = probe(tree)
    assert probed.platform.ssd_count == 1 and probed.platform.ssd.model == "Samsung SSD 980 PRO 1TB"
    assert any(n.startswith("left out nvme1 (WD_BLACK SN850X 1000GB)") for n in probed.notes)
    (tree / "sys/class/nvme/nvme1/model").write_text("Samsung SSD 980 PRO 1TB\n")
    (tree / "sys/class/nvme/nvme1/transport").write_text("tcp\n")
    probed = probe(tree)
    assert probed.platform.ssd_count == 1 and any("nvme1 (tcp)" in n for n in probed.notes)


def test_the_active_schedulers_tunables_are_read(tmp_path):
    """queue/scheduler's bracketed name is the active one; its queue/iosched/* tunables that the
    model's scheduler has are kept (a knob it does not model is not)."""
    tree = tmp_path / "xeon2s"
    shutil.copytree(TREES / "xeon2s", tree)
    q = tree / "sys/block/nvme0n1/queue"
    (q / "scheduler").write_text("none [mq-deadline]\n")
    (q / "iosched").mkdir()
    for knob, value in (("read_expire", "250"), ("fifo_batch", "8"), ("not_modelled", "1")):
        (q / "iosched" / knob).write_text(value + "\n")
    queue = probe(tree).platform.queue
    assert queue.scheduler == "mq-deadline" and queue.iosched == {"read_expire": 250, "fifo_batch": 8}


def test_vm_without_nvme_cpufreq_or_cpuidle():
    with pytest.raises(NoNvmeError, match="--ssd NAME"):
        probe("vm")
    p = probe("vm", ssd="optane-p4800x").platform
    cpu = p.cpu
    # no cpufreq: the one frequency the guest reports; no cpuidle: the kernel's default idle, HLT
    assert cpu.min_freq_ghz == cpu.base_freq_ghz == cpu.max_freq_ghz == pytest.approx(2.593906)
    assert not cpu.turbo and [s.name for s in cpu.cstates] == ["HLT"] and not cpu.cstates[0].polling
    assert (cpu.logical_cpus, cpu.sockets) == (4, 1)
    assert p.ssd.read == optane_p4800x().read and p.ssd_count == 1


def test_the_probed_disabled_state_is_never_entered_in_the_simulation(tmp_path, capsys):
    """cpuidle's ``disable`` reaches the simulator: with C10 disabled the idle CPUs stop at C8;
    the same machine with C10 enabled sends them to C10."""
    enabled = tmp_path / "desktop"
    shutil.copytree(TREES / "desktop", enabled)
    (enabled / "sys/devices/system/cpu/cpu0/cpuidle/state4/disable").write_text("0\n")
    deepest = {}
    for name, root in (("disabled", TREES / "desktop"), ("enabled", enabled)):
        out, res = tmp_path / f"{name}.yaml", tmp_path / f"{name}.json"
        assert cli(["probe", "--root", root, "-o", out], capsys)[0] == 0
        assert cli(["run", "--platform", out, *SHORT, "--quiet", "--json", res], capsys)[0] == 0
        idle_cpu = json.loads(res.read_text())["summary"]["cstate_residency"]["cpu5"]
        deepest[name] = max(idle_cpu, key=idle_cpu.get)
    assert deepest == {"disabled": "C8", "enabled": "C10"}


@pytest.mark.parametrize("tree,extra", [("xeon2s", []), ("desktop", []), ("vm", ["--ssd", "pm1743"])])
def test_the_written_file_loads_as_probed_and_runs(tree, extra, tmp_path, capsys):
    out = tmp_path / "mine.yaml"
    rc, _, err = cli(["probe", "--root", TREES / tree, "-o", out, *extra], capsys)
    assert rc == 0, err
    text = out.read_text()
    assert load_platform(str(out)) == probe(tree, name="mine", ssd=extra[1] if extra else None).platform
    # a value that /sys cannot tell says so on its line; one read from it names the file
    lines: dict = {}  # the first line of each key (the top-level memory_bytes before the page cache's)
    for ln in text.splitlines():
        if not ln.startswith("#"):
            lines.setdefault(ln.strip().lstrip("- ").split(":")[0], ln)
    for key in ("core_leakage_w", "uncore_idle_w", "parallel_units", "active_read_w"):
        assert "# estimate" in lines[key], lines[key]
    for key in ("physical_cores", "sockets", "smt", "memory_bytes", "version"):
        assert "estimate" not in lines[key] and "/" in lines[key].split("#", 1)[1], lines[key]
    rc, stdout, err = cli(["run", "--platform", out, *SHORT], capsys)
    assert rc == 0, err
    assert "IOPS" in stdout
    # the page cache's memory: what /proc/meminfo says is free or file pages, else an estimate
    cache = [ln for ln in text.splitlines() if ln.startswith("  memory_bytes:")]
    assert len(cache) == 1 and ("MemFree" in cache[0] if tree == "xeon2s" else "# estimate" in cache[0])


def test_save_captures_the_files_read_and_round_trips_through_root(tmp_path, capsys):
    saved, first, again, unpacked = tmp_path / "lab.tar.gz", tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "x"
    assert cli(["probe", "--root", TREES / "xeon2s", "--save", saved, "-o", first], capsys)[0] == 0
    with tarfile.open(saved) as tar:
        files = {m.name for m in tar.getmembers() if m.isfile()}
        tar.extractall(unpacked)
    # exactly what was read: the RAPL DRAM sub-zone and the namespace's dev file were not
    assert "sys/devices/system/cpu/cpu39/topology/core_id" in files
    assert "proc/sys/kernel/osrelease" in files and "sys/module/nvme/parameters/poll_queues" in files
    assert not any("intel-rapl:0:0" in f or f.endswith("/dev") for f in files)
    assert cli(["probe", "--root", saved, "-o", again], capsys)[0] == 0
    assert load_platform(str(again)).model_copy(update={"name": "a"}) == load_platform(str(first))
    assert cli(["probe", "--root", unpacked, "-o", again], capsys)[0] == 0
    assert load_platform(str(again)).model_copy(update={"name": "a"}) == load_platform(str(first))


def test_without_nvme_the_probe_asks_for_ssd_and_still_saves(tmp_path, capsys):
    saved = tmp_path / "vm.tar.gz"
    rc, out, err = cli(["probe", "--root", TREES / "vm", "--save", saved], capsys)
    assert rc == 2 and out == ""
    assert err.strip().splitlines()[-1].startswith("stacksim: error: no NVMe device") and "--ssd NAME" in err
    assert cli(["probe", "--root", saved, "--ssd", "p3700"], capsys)[0] == 0


def test_this_machine_probes_or_asks_for_an_ssd(tmp_path, capsys):
    out = tmp_path / "here.yaml"
    rc, _, err = cli(["probe", "-o", out], capsys)
    assert rc in (0, 2), err
    if rc == 2:
        assert err.startswith("stacksim: error: ") and len(err.strip().splitlines()) == 1, err
    if "no NVMe device" in err:  # a VM: it asks for the SSD to simulate, then probes with it
        assert "name the SSD to simulate with --ssd NAME" in err
        rc, _, err = cli(["probe", "-o", out, "--ssd", next(iter(SSD_PRESETS))], capsys)
        assert rc == 0, err
    if rc == 0:
        load_platform(str(out))


@pytest.mark.parametrize(
    "args,says",
    [
        (["--root", "/nonexistent/tree"], "--root /nonexistent/tree: no such directory"),
        (["--root", "."], "holds no saved /proc or /sys"),
        (["--root", "README.md"], "not a readable saved tree"),
        (["--root", TREES / "xeon2s", "--save", "/nonexistent/dir/t.tar.gz"], "--save"),
        (["--root", TREES / "xeon2s", "--save", "t.zip"], "--save t.zip: the saved tree is a .tar.gz"),
        (["--root", TREES / "xeon2s", "-o", "mine.json"], "-o mine.json: write the platform to a .yaml"),
        (["--root", TREES / "xeon2s", "--cpu", "pentium"], "--cpu pentium: no CPU preset"),
        (["--root", TREES / "xeon2s", "--ssd", "floppy"], "--ssd floppy: no SSD preset"),
    ],
)
def test_bad_input_is_one_message_and_exit_2(args, says, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    rc, out, err = cli(["probe", *args], capsys)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_a_preset_added_to_the_registry_is_matched_by_its_model_name(monkeypatch):
    """No list to keep: an entry added to SSD_PRESETS (a factory, or an object with ``make`` as a
    catalogue entry may be) is matched by its ``model`` field."""
    monkeypatch.setitem(SSD_PRESETS, "samsung-980pro", lambda: pm1743(model="Samsung 980 PRO", idle_w=0.035))
    p = probe("desktop").platform
    assert p.ssd.idle_w == 0.035 and p.ssd.model == "Samsung SSD 980 PRO 1TB"

    class Entry:
        make = staticmethod(lambda: pm1743(model="Samsung 980 PRO", idle_w=0.04))

    monkeypatch.setitem(SSD_PRESETS, "samsung-980pro", Entry())
    assert probe("desktop").platform.ssd.idle_w == 0.04


def test_names_match_by_words_the_most_specific_first():
    models = {"e5-2640": "Intel Xeon E5-2640 v4", "e5-2660": "Intel Xeon E5-2660 v4", "xeon": "Intel Xeon"}
    assert match_name("Intel(R) Xeon(R) CPU E5-2660 v4 @ 2.00GHz", models) == "e5-2660"
    assert match_name("Intel(R) Xeon(R) Processor", models) == "xeon"
    assert match_name("AMD EPYC 7763 64-Core Processor", models) is None
    # a model word of letters and digits may be run together, or apart, in the reported name
    assert match_name("Samsung SSD 980 PRO 1TB", {"980pro": "Samsung 980PRO", "990pro": "Samsung 990PRO"}) == "980pro"
    assert match_name("Samsung SSD 9800 PRO", {"980pro": "Samsung 980PRO"}) is None
    assert "p4800x" in words(reported_name("INTEL SSDPED1K375GA"))
    assert "900p" in words(reported_name("INTEL SSDPE21D280GA"))


def test_generations_place_cpus_without_a_preset():
    assert generation("Intel Xeon Processor (Cascadelake)", "GenuineIntel", 6, 85).label.startswith("Skylake-SP")
    assert generation("Intel(R) Xeon(R) Processor", "GenuineIntel", 6, 207).label == "Emerald Rapids"
    g = generation("AMD EPYC 7763 64-Core Processor")
    assert (g.vendor, g.market, g.year) == ("amd", "server", 2021)
    presets = {k: generation(m) for k, m in (("xeon", "Intel Xeon Silver 4210R"), ("epyc", "AMD EPYC 9454P"))}
    assert nearest_cpu(g, "amd", presets) == "epyc"
    assert nearest_cpu(generation("Intel Xeon Gold 6338"), "intel", presets) == "xeon"
    assert nearest_cpu(None, "amd", presets) == "epyc"


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_commented_platform_yaml_reads_back_unchanged(name):
    """A comment on every line, with '#' and ':' in it, never changes a value."""
    plat = PLATFORMS[name]()
    text = platform_yaml(plat, "header", comment=lambda path, leaf: f"{path}: a # note")
    assert all("#" in line for line in text.splitlines())
    assert type(plat).model_validate(yaml.safe_load(text)) == plat


def test_a_presets_parenthesised_note_is_not_part_of_the_name_it_matches():
    from scenarios.config.preset_match import match_name

    models = {"core-i9-12900k": "Intel Core i9-12900K (P-cores)", "other": "Intel Core i9"}
    assert match_name("12th Gen Intel(R) Core(TM) i9-12900K", models) == "core-i9-12900k"


def test_probed_frequencies_are_written_as_read():
    """/proc/cpuinfo's 2596.14 MHz is 2.59614 GHz in the YAML, not 2596.14 / 1000 =
    2.5961399999999997 (issue 46); sysfs kHz likewise."""
    from scenarios.config.probe import _khz_ghz, _mhz_ghz

    assert repr(_mhz_ghz(2596.14)) == "2.59614" and 2596.14 / 1000 != 2.59614
    assert repr(_khz_ghz(2596140)) == "2.59614" and _khz_ghz(800000) == 0.8


def _guest(tmp_path, vcpus: int, name: str) -> Path:
    """The vm tree cut down to ``vcpus`` vCPUs of a host CPU named ``name`` (hypervisor flag kept)."""
    tree = tmp_path / f"vm{vcpus}"
    shutil.copytree(TREES / "vm", tree)
    cpu = tree / "sys/devices/system/cpu"
    for c in range(vcpus, 4):
        shutil.rmtree(cpu / f"cpu{c}")
    (cpu / "online").write_text(f"0-{vcpus - 1}\n")
    (tree / "sys/devices/system/node/node0/cpulist").write_text(f"0-{vcpus - 1}\n")
    info = (tree / "proc/cpuinfo").read_text().split("\n\n")[:vcpus]
    blocks = [b.replace("Intel Xeon Processor (Cascadelake)", name) for b in info]
    if name.startswith("AMD"):  # a Zen 4 host: family 25 (0x19), model 17 (Genoa)
        amd = {"vendor_id": "AuthenticAMD", "cpu family": "25", "model": "17"}
        blocks = [
            "\n".join(
                f"{k}\t: {amd[k.strip()]}" if k.strip() in amd else f"{k}:{v}"
                for k, _, v in (ln.partition(":") for ln in b.splitlines())
            )
            for b in blocks
        ]
    (tree / "proc/cpuinfo").write_text("\n\n".join(blocks) + "\n")
    return tree


POWER_FIELDS = ("core_leakage_w", "core_dynamic_w", "uncore_active_w", "uncore_idle_w", "power_limit_w", "pl2_w")


@pytest.mark.parametrize("host", ["AMD EPYC 9454P 48-Core Processor", "AMD EPYC Processor"])
def test_a_two_vcpu_guest_gets_no_figure_of_the_storage_node(host, tmp_path):
    """Issue 46: a 2-vCPU VM was written the 48-core storage node's package and box power (171 W).
    A guest's powers come from its class and its own vCPUs and memory: none is the nearest
    preset's or built-in platform's, and they scale with the vCPUs."""
    probed = probe(_guest(tmp_path, 2, host), ssd="pm1743")
    p = probed.platform
    assert p.cpu.logical_cpus == 2
    for other in (make() for make in PLATFORMS.values()):
        for f in POWER_FIELDS:
            mine = getattr(p.cpu, f)
            assert mine is None or mine != getattr(other.cpu, f), (f, other.name)
        for f in ("dram_w", "platform_base_w", "platform_cpu_coupling", "c0_core_w"):
            assert getattr(p.power, f) != getattr(other.power, f) or getattr(p.power, f) == 0.0, (f, other.name)
    # the host's board and package limit are not observable: none; DRAM is the guest's memory's share
    assert p.power.platform_base_w == 0.0 and p.cpu.power_limit_w is None
    assert p.power.dram_w == pytest.approx(3.0 * p.memory_bytes / (16 << 30), abs=0.01)
    four = probe(_guest(tmp_path, 4, host), ssd="pm1743").platform
    assert four.cpu.uncore_active_w == pytest.approx(2 * p.cpu.uncore_active_w, rel=0.05)
    assert any(n.startswith("power: estimates for a 2-vCPU guest") for n in probed.notes)


def test_guest_powers_say_their_basis_on_stderr_in_the_file_and_in_the_run(tmp_path, capsys):
    out = tmp_path / "guest.yaml"
    rc, _, err = cli(["probe", "--root", TREES / "vm", "--ssd", "pm1743", "-o", out], capsys)
    assert rc == 0, err
    assert "stacksim probe: power: estimates for a 4-vCPU guest" in err and "not observable" in err
    text = out.read_text()
    for key in ("core_leakage_w", "uncore_active_w", "dram_w", "platform_base_w"):
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(key + ":"))
        assert "# estimate: " in line and ("class" in line or "GiB" in line or "host" in line), line
    assert "power: estimates for a 4-vCPU guest" in load_platform(str(out)).calibration
    rc, stdout, err = cli(["run", "--platform", out, *SHORT], capsys)
    assert rc == 0, err
    lines = stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("power W:"))
    assert "power: estimates for a 4-vCPU guest" in "\n".join(lines[at : at + 3])
    # a built-in platform's powers are not estimates of a class: no such line
    rc, stdout, _ = cli(["run", *SHORT], capsys)
    assert rc == 0 and "power: estimates" not in stdout
    # the line is the platform's field (power.estimated), not a text found in its description
    guest = load_platform(str(out))
    assert guest.power.estimated.startswith("4-vCPU guest: ") and guest.power.estimated in guest.calibration
    rc, stdout, err = cli(["run", *SHORT, "--set", "power.estimated=lab box (my guesses)"], capsys)
    assert rc == 0, err
    assert "  (power: estimates for a lab box (my guesses))" in stdout.splitlines()


def test_a_bare_metal_cpu_no_preset_is_gets_its_class_and_a_named_one_its_preset(tmp_path):
    """A server CPU of no preset: its own cores at the class's TDP per core (not the nearest
    preset's package); a CPU a preset is by name keeps the preset's figures."""
    tree = tmp_path / "xeon"
    shutil.copytree(TREES / "xeon2s", tree)
    info = tree / "proc/cpuinfo"
    info.write_text(info.read_text().replace("Silver 4210R CPU @ 2.40GHz", "Silver 4299X CPU @ 2.40GHz"))
    probed = probe(tree).platform
    named = probe("xeon2s").platform
    assert named.cpu.uncore_active_w == 30.0 and named.power == PLATFORMS["cheops23-optane"]().power
    assert probed.cpu.uncore_active_w != named.cpu.uncore_active_w
    assert probed.cpu.power_limit_w == 100.0  # RAPL's PL1 is read, not estimated
    assert probed.power.platform_base_w == 2 * 35.0
    assert probed.power.dram_w == pytest.approx(3.0 * probed.memory_bytes / (16 << 30), abs=0.01)
    laptop = tmp_path / "laptop"
    shutil.copytree(TREES / "desktop", laptop)
    info = laptop / "proc/cpuinfo"
    info.write_text(info.read_text().replace("12th Gen Intel(R) Core(TM) i9-12900K", "Intel(R) Core(TM) i7-8550U"))
    assert probe(laptop).platform.power.platform_base_w == 3.0
