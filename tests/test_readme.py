"""The README's set-up steps are true to the code: the order the contract asks for, the files they
name, the variables of the example environment, and the policy example, which the bot must accept."""

from __future__ import annotations

import re
import textwrap
import tomllib
from pathlib import Path

import pytest

from bot.cli import main
from bot.domain.errors import InfraError
from bot.settings import BotConfig, Settings, load_settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def fenced(text: str, language: str) -> list[str]:
    """Code blocks, dedented (those inside a numbered step are indented with it)."""
    return [textwrap.dedent(block) for block in re.findall(rf"```{language}\n(.*?) *```", text, flags=re.S)]


def test_what_it_is_and_a_picture_then_the_two_commands_then_slack_then_the_reference() -> None:
    headings = re.findall(r"^## (.+)$", README, flags=re.M)
    assert headings[:3] == ["Try it", "Put it in your Slack", "Using it in Slack"]
    before_try = README[: README.index("## Try it")]
    assert "csb-bot is a Slack bot" in before_try and "(docs/playground.png)" in before_try
    first_block = fenced(section("Try it"), "sh")[0].splitlines()
    assert [line.split("#")[0].strip() for line in first_block[:2]] == ["make playground", "make test"]


def test_every_file_the_steps_name_is_in_the_repository() -> None:
    steps = section("Put it in your Slack")
    named = set(
        re.findall(r"(?:^|[\s`(])(?:/opt/csb-bot/)?((?:deploy|configs|docs)/[\w./-]+|manifest\.yml)", steps)
    )
    assert {"manifest.yml", "deploy/csb-bot.service", "configs/csb-bot.toml"} <= named
    assert [name for name in sorted(named) if not (ROOT / name).exists()] == []


def test_the_example_environment_holds_only_variables_the_bot_reads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (environment,) = [
        block for block in fenced(section("Put it in your Slack"), "sh") if "SLACK_BOT_TOKEN=" in block
    ]
    names = re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", environment, flags=re.M)
    assert {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "CSB_REPO", "HARBOR_ENV"} <= set(names)
    settings = [line for line in environment.splitlines() if line and not line.startswith("#")]
    # systemd's EnvironmentFile knows comments on lines of their own only: "x # y" would be the value.
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*=\S+", line) for line in settings), settings
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    serve_help = capsys.readouterr().out
    assert {field.upper() for field in Settings.model_fields} >= {
        n for n in names if n.startswith(("SLACK_", "CSB_"))
    }
    assert [name for name in names if f"  {name}" not in serve_help] == []


def test_the_token_pages_are_those_the_bot_names_when_a_token_is_wrong() -> None:
    steps = section("Put it in your Slack")
    with pytest.raises(InfraError) as refused:
        load_settings(slack_bot_token="xapp-1", slack_signing_secret="s", slack_app_token="xoxb-1")
    pages = re.findall(r"\(([A-Z][\w &]+), ([A-Z][\w -]+)\)", str(refused.value))
    assert [page for page, _ in pages] == ["OAuth & Permissions", "Basic Information"], str(refused.value)
    for page, item in pages:
        assert f"*{page} → {item}" in steps, (page, item)
    assert "`connections:write`" in steps


def test_the_policy_example_is_accepted_by_the_bot() -> None:
    (policy,) = fenced(section("Put it in your Slack"), "toml")
    config = BotConfig.model_validate(tomllib.loads(policy))
    assert config.policy.official.approvers.users and config.policy.admins
