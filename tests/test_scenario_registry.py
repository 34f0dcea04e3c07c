"""One scenario system for host and server runs: the built-in scenarios of both kinds are YAML files,
one registry decides the kind, one resolver (`resolve_run`) gives either configuration, and the
platform's `--set` keys mean the same in both."""

import pytest

from scenarios.config.host import RunConfig, resolve
from scenarios.config.registry import builtin_scenarios, scenario_kind, source_args
from scenarios.config.resolve import resolve_run
from scenarios.config.server import ServerRunConfig, resolve_server, server_scenarios
from scenarios.config.sets import parse_sets
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError
from stacksim.cli import main

SHORT_BURST = {"workload.time_scale": "0.002"}


def test_builtin_scenarios_of_both_kinds_are_data():
    host, server = builtin_scenarios("host"), builtin_scenarios("server")
    assert {"default", "hybrid8"} <= set(host)
    assert set(server) == {"server-stable", "server-burst", "server-trace"}
    assert builtin_scenarios() == dict(sorted({**host, **server}.items()))
    assert all(p.suffix == ".yaml" for p in builtin_scenarios().values())
    assert {scenario_kind(n) for n in host} == {"host"} and {scenario_kind(n) for n in server} == {"server"}
    assert "5% of its max IOPS" in server_scenarios()["server-burst"]


def test_resolve_run_gives_either_kind_as_its_own_resolver_does():
    host = resolve_run(scenario="default", sets={"runtime": "20ms"}, seed=3)
    assert isinstance(host, RunConfig) and host == resolve(scenario="default", sets={"runtime": "20ms"}, seed=3)
    server = resolve_run(scenario="server-burst", sets={"server.policy": "sandman", **SHORT_BURST}, seed=3)
    assert isinstance(server, ServerRunConfig)
    assert server == resolve_server("server-burst", {"server.policy": "sandman", **SHORT_BURST}, seed=3)
    # the scenario's own policy defaults still apply (server-stable: SANDMAN consolidates early)
    stable = resolve_run(scenario="server-stable", sets={"server.policy": "sandman"})
    assert stable.policy == {"coarse_first_s": 0.01}
    assert resolve_run() == resolve(), "no source: the default scenario"
    assert host.warmup_ns == max(j.ramp_time_ns for j in host.jobs) and server.warmup_ns == server.workload.warmup_ns


def test_a_server_scenario_file_of_your_own(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("kind: server\nname: my-burst\nworkload: burst\nset: {workload.time_scale: 0.002}\nseed: 9\n")
    assert source_args(str(path)) == {"scenario": str(path)} and scenario_kind(str(path)) == "server"
    cfg = resolve_run(scenario=str(path), sets={"server.policy": "linux"})
    assert cfg.name == "my-burst" and cfg.seed == 9 and cfg.server.policy == "linux"
    assert cfg.workload.kind == "burst" and cfg.workload.time_scale == 0.002
    assert cfg == resolve_server("server-burst", {**SHORT_BURST, "server.policy": "linux"}, seed=9).model_copy(
        update={"name": "my-burst"}
    )


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: resolve(scenario="server-burst"), "server-burst is a storage-server scenario, not a host"),
        (lambda: resolve_server("default"), "default is a host (fio jobs) scenario, not a storage-server one"),
        (lambda: resolve_run(scenario="nosuch"), "unknown scenario 'nosuch'"),
        (lambda: resolve_run(scenario="default", job_file="x.fio"), "not both"),
    ],
)
def test_the_wrong_kind_is_one_clear_error(call, needle):
    with pytest.raises(ConfigError) as err:
        call()
    assert needle in str(err.value)


def test_a_bad_kind_names_the_file(tmp_path, capsys):
    path = tmp_path / "odd.yaml"
    path.write_text("kind: cluster\nname: x\n")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "odd.yaml: kind 'cluster': expected one of host, server" in err and "Traceback" not in err


def test_platform_keys_mean_the_same_for_host_and_server():
    sets = parse_sets(["cpu.turbo=false", "kernel.ctx_switch_cycles=3100", "queue.io_poll=1"])
    host = resolve(scenario="default", sets=sets)
    server = resolve_server("server-burst", {**sets, **SHORT_BURST})
    for cfg in (host, server):
        assert cfg.platform.cpu.turbo is False and cfg.platform.kernel.ctx_switch_cycles == 3100
        assert cfg.platform.queue.io_poll is True
    with pytest.raises(ConfigError, match="name a queue attribute"):
        resolve_server("server-burst", {"queue": "1"})


def test_cli_run_writes_server_records_like_a_host_run(tmp_path, capsys):
    rec = tmp_path / "r.csv"
    assert main(["run", "server-burst", "--set", "workload.time_scale=0.002", "--quiet", "--records", str(rec)]) == 0
    rows = rec.read_text().splitlines()
    same = simulate(resolve_server("server-burst", SHORT_BURST), records=True).records
    assert rows[0].split(",") == list(same.dtype.names)
    assert len(rows) - 1 == len(same) > 0
