"""Where lanes run: CSB_EXECUTOR, CSB_RAY_ADDRESS and CSB_RAY_TOKEN, or the `[executor]` section of the
config file with the environment winning; and `csb-bot check` asking the Ray head for its version."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ray_cluster import RayHead, free_port
from test_cli import bot_env

from bot.domain.errors import InfraError
from bot.settings import BotConfig, Settings, load_settings

TOKEN = "ray-token-never-shown-7f3a"
SLACK = {"slack_bot_token": "xoxb-ray-test", "slack_signing_secret": "ray-test-secret"}


def _settings(**env: str) -> Settings:
    return load_settings(**SLACK, **env)


def _config(toml: str) -> BotConfig:
    return BotConfig.model_validate(tomllib.loads(toml))


def test_local_is_the_default() -> None:
    choice = _settings().executor(BotConfig())
    assert (choice.kind, choice.ray_address, choice.ray_token) == ("local", None, None)


def test_the_executor_section_is_read_and_the_environment_wins_key_by_key() -> None:
    config = _config(
        '[executor]\nkind = "ray"\nray_address = "http://from-file:8265/"\nray_token = "file-token"\n'
    )
    from_file = _settings().executor(config)
    assert (from_file.kind, from_file.ray_address) == ("ray", "http://from-file:8265")
    assert from_file.ray_token is not None and from_file.ray_token.get_secret_value() == "file-token"
    mixed = _settings(csb_ray_address="https://from-env:443", csb_ray_token=TOKEN).executor(config)
    assert (mixed.kind, mixed.ray_address) == ("ray", "https://from-env:443")
    assert mixed.ray_token is not None and mixed.ray_token.get_secret_value() == TOKEN
    assert _settings(csb_executor="local").executor(config).kind == "local"


def test_ray_without_an_address_names_both_places_to_set_it() -> None:
    with pytest.raises(InfraError, match=r"set CSB_RAY_ADDRESS or ray_address in the \[executor\] section"):
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
    choice = settings.executor(BotConfig())
    assert TOKEN not in repr(settings) and TOKEN not in repr(choice) and TOKEN not in str(choice)
    assert TOKEN in settings.secret_values()


def _check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = bot_env(tmp_path, CSB_EXECUTOR="ray", CSB_RAY_TOKEN=TOKEN, **env)
    command = [sys.executable, "-m", "bot", "check"]
    return subprocess.run(command, env=base, cwd=tmp_path, capture_output=True, text=True, timeout=60)


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
        "✗ the Ray executor needs the head's address: set CSB_RAY_ADDRESS or ray_address in the "
        "[executor] section (the head's dashboard URL, e.g. http://ray-head:8265)"
    ]


def test_empty_variables_are_unset() -> None:
    config = _config('[executor]\nkind = "ray"\nray_address = "http://from-file:8265"\n')
    choice = _settings(csb_executor="", csb_ray_address=" ", csb_ray_token="").executor(config)
    assert (choice.kind, choice.ray_address, choice.ray_token) == ("ray", "http://from-file:8265", None)


def test_the_lane_resource_and_pending_bound_are_read_and_ray_s_own_resources_refused() -> None:
    config = _config('[executor]\nray_lane_resource = "from_file"\nray_pending_sec = 60\n')
    from_file = _settings(csb_executor="ray", csb_ray_address="http://h:8265").executor(config)
    assert (from_file.ray_lane_resource, from_file.ray_pending_sec) == ("from_file", 60)
    from_env = _settings(
        csb_executor="ray", csb_ray_address="http://h:8265", csb_ray_lane_resource="csb_slot"
    ).executor(config)
    assert from_env.ray_lane_resource == "csb_slot"
    for reserved in ("CPU", "bundle"):
        with pytest.raises(InfraError, match="one of Ray's own resources"):
            _settings(csb_ray_lane_resource=reserved)
