"""Where lanes run: CSB_EXECUTOR, CSB_RAY_ADDRESS and CSB_RAY_TOKEN, or the `[executor]` section of the
config file (`kind`, and Ray's own `[executor.ray]` table) with the environment winning; and `csb-bot
check` asking the Ray head for its version and for a node that offers the lane resource."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ray_cluster import SLOTS, RayHead, free_port
from test_cli import bot_env

from bot.domain.errors import InfraError
from bot.executors.base import Probe, ProbeStatus
from bot.executors.local import LocalSettings
from bot.executors.ray_check import lane_resource_probe
from bot.executors.ray_settings import RaySettings
from bot.executors.registry import check_executor
from bot.rayjobs.jobs_api import NodeInfo
from bot.settings import BotConfig, Settings, load_settings

pytestmark = pytest.mark.slow  # real child processes

TOKEN = "ray-token-never-shown-7f3a"
SLACK = {"slack_bot_token": "xoxb-ray-test", "slack_signing_secret": "ray-test-secret"}


def _settings(**env: str) -> Settings:
    return load_settings(**SLACK, **env)


def _config(toml: str) -> BotConfig:
    return BotConfig.model_validate(tomllib.loads(toml))


def _ray(settings: Settings, config: BotConfig) -> RaySettings:
    chosen = settings.executor(config)
    assert isinstance(chosen, RaySettings)
    return chosen


def test_local_is_the_default() -> None:
    assert _settings().executor(BotConfig()) == LocalSettings()


def test_the_executor_section_is_read_and_the_environment_wins_key_by_key() -> None:
    config = _config(
        '[executor]\nkind = "ray"\n[executor.ray]\naddress = "http://from-file:8265/"\ntoken = "file-token"\n'
    )
    from_file = _ray(_settings(), config)
    assert from_file.address == "http://from-file:8265"
    assert from_file.token is not None and from_file.token.get_secret_value() == "file-token"
    mixed = _ray(_settings(csb_ray_address="https://from-env:443", csb_ray_token=TOKEN), config)
    assert mixed.address == "https://from-env:443"
    assert mixed.token is not None and mixed.token.get_secret_value() == TOKEN
    assert _settings(csb_executor="local").executor(config).kind == "local"


def test_the_section_s_former_flat_keys_still_read_as_ray_s() -> None:
    config = _config('[executor]\nkind = "ray"\nray_address = "http://flat:8265"\nray_pending_sec = 60\n')
    assert _ray(_settings(), config) == RaySettings(address="http://flat:8265", pending_sec=60)


def test_a_wrong_key_or_kind_in_the_file_is_refused_by_its_place(tmp_path: Path) -> None:
    path = tmp_path / "csb-bot.toml"
    for toml, message in [
        ('[executor]\nkind = "slurm"\n', "executor.kind: Input should be 'local' or 'ray'"),
        ("[executor.ray]\nadress = 'http://h:8265'\n", "executor.ray.adress: Extra inputs are not permitted"),
        ("[executor]\nray_address = 'h:8265'\n", "executor.ray.address: Value error, not an http(s) URL"),
    ]:
        path.write_text(toml)
        with pytest.raises(InfraError) as refused:
            _settings(csb_config=str(path)).load_config()
        assert f"config file {path} is invalid: {message}" in str(refused.value)


def test_ray_without_an_address_names_both_places_to_set_it() -> None:
    with pytest.raises(InfraError, match=r"set CSB_RAY_ADDRESS or address in the \[executor.ray\] section"):
        _settings(csb_executor="ray").executor(BotConfig())


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"csb_executor": "slurm"}, "CSB_EXECUTOR: Input should be 'local' or 'ray'"),
        ({"csb_ray_address": "ray-head:8265"}, "CSB_RAY_ADDRESS: Value error, not an http(s) URL"),
    ],
)
def test_a_wrong_value_is_one_line_naming_the_valid_ones(env: dict[str, str], message: str) -> None:
    with pytest.raises(InfraError) as refused:
        _settings(**env)
    assert message in str(refused.value)


def test_the_token_is_a_secret_in_settings_and_choice() -> None:
    settings = _settings(csb_executor="ray", csb_ray_address="http://h:8265", csb_ray_token=TOKEN)
    choice = _ray(settings, BotConfig())
    assert TOKEN not in repr(settings) and TOKEN not in repr(choice) and TOKEN not in str(choice)
    assert TOKEN in settings.secret_values()


def _check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = bot_env(tmp_path, CSB_EXECUTOR="ray", CSB_RAY_TOKEN=TOKEN, **env)
    command = [sys.executable, "-m", "bot", "check"]
    # The bound of test_cli.run: `check` runs every probe, a minute and more on a loaded machine.
    return subprocess.run(command, env=base, cwd=tmp_path, capture_output=True, text=True, timeout=180)


def test_check_reports_the_ray_head_s_version(ray_head: RayHead, tmp_path: Path) -> None:
    result = _check(tmp_path, CSB_RAY_ADDRESS=ray_head.dashboard_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"✓ Ray head {ray_head.dashboard_url} answers: Ray 2.60.0" in result.stdout.splitlines()
    assert TOKEN not in result.stdout + result.stderr


def test_check_reports_a_head_that_does_not_answer_on_one_line(tmp_path: Path) -> None:
    address = f"http://127.0.0.1:{free_port()}"
    result = _check(tmp_path, CSB_RAY_ADDRESS=address)
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("✗")]  # notes aside
    assert line.startswith(f"✗ Ray head {address} unreachable: ")
    assert TOKEN not in result.stdout + result.stderr


def test_check_reports_ray_without_an_address(tmp_path: Path) -> None:
    result = _check(tmp_path)
    assert result.returncode == 1
    assert [line for line in result.stdout.splitlines() if line.startswith("✗")] == [
        "✗ the Ray executor needs the head's address: set CSB_RAY_ADDRESS or address in the "
        "[executor.ray] section (the head's dashboard URL, e.g. http://ray-head:8265)"
    ]


def test_empty_variables_are_unset() -> None:
    config = _config('[executor]\nkind = "ray"\n[executor.ray]\naddress = "http://from-file:8265"\n')
    choice = _ray(_settings(csb_executor="", csb_ray_address=" ", csb_ray_token=""), config)
    assert (choice.kind, choice.address, choice.token) == ("ray", "http://from-file:8265", None)


def test_the_lane_resource_and_pending_bound_are_read_and_ray_s_own_resources_refused() -> None:
    config = _config('[executor.ray]\nlane_resource = "from_file"\npending_sec = 60\n')
    from_file = _ray(_settings(csb_executor="ray", csb_ray_address="http://h:8265"), config)
    assert (from_file.lane_resource, from_file.pending_sec) == ("from_file", 60)
    from_env = _ray(
        _settings(csb_executor="ray", csb_ray_address="http://h:8265", csb_ray_lane_resource="csb_slot"),
        config,
    )
    assert from_env.lane_resource == "csb_slot"
    for reserved in ("CPU", "bundle"):
        with pytest.raises(InfraError, match="one of Ray's own resources"):
            _settings(csb_ray_lane_resource=reserved)


async def test_the_ray_check_finds_the_head_its_version_and_a_node_with_the_lane_resource(
    ray_head: RayHead,
) -> None:
    settings = RaySettings(address=ray_head.dashboard_url, lane_resource="csb_slot")
    assert await check_executor(settings) == [
        Probe(ProbeStatus.OK, f"Ray head {ray_head.dashboard_url} answers: Ray 2.60.0"),
        Probe(ProbeStatus.OK, f"Ray nodes offering the lane resource csb_slot: 1 ({SLOTS} slots)"),
    ]


async def test_the_ray_check_fails_a_head_no_node_of_which_offers_the_lane_resource(
    ray_head: RayHead,
) -> None:
    settings = RaySettings(address=ray_head.dashboard_url, lane_resource="csb_no_such_slot")
    head, resource = await check_executor(settings)
    assert head.status is ProbeStatus.OK
    assert resource.status is ProbeStatus.FAIL
    assert resource.message.startswith(
        "no live Ray node offers the lane resource csb_no_such_slot (CSB_RAY_LANE_RESOURCE; live nodes: 1)"
    )


def test_check_fails_on_a_lane_resource_no_node_offers(ray_head: RayHead, tmp_path: Path) -> None:
    result = _check(tmp_path, CSB_RAY_ADDRESS=ray_head.dashboard_url, CSB_RAY_LANE_RESOURCE="csb_none")
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("✗")]
    assert line.startswith("✗ no live Ray node offers the lane resource csb_none")
    assert f"✓ Ray head {ray_head.dashboard_url} answers: Ray 2.60.0" in result.stdout.splitlines()


def test_a_dead_node_or_a_node_without_a_whole_slot_offers_nothing() -> None:
    nodes = [
        NodeInfo(node_id="dead", state="DEAD", resources_total={"csb_slot": 8}),
        NodeInfo(node_id="half", state="ALIVE", resources_total={"csb_slot": 0.5}),
        NodeInfo(node_id="none", state="ALIVE", resources_total={"CPU": 4}),
    ]
    assert lane_resource_probe("csb_slot", nodes).status is ProbeStatus.FAIL
    nodes.append(NodeInfo(node_id="worker", state="ALIVE", resources_total={"csb_slot": 4}))
    assert lane_resource_probe("csb_slot", nodes) == Probe(
        ProbeStatus.OK, "Ray nodes offering the lane resource csb_slot: 1 (4 slots)"
    )
