"""manifest.yml is a valid Slack app manifest and asks for exactly what the bot uses."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from bot.slack.scopes import BOT_SCOPES

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "tests" / "fixtures" / "slack" / "manifest.schema.1.0.0.json"
CONTRACT_SCOPES = {
    "commands",
    "chat:write",
    "chat:write.public",
    "users:read",
    "usergroups:read",
    "im:write",
    "files:write",
    "channels:history",
    "groups:history",
}


def _manifest() -> dict:
    return yaml.safe_load((ROOT / "manifest.yml").read_text())


def test_manifest_validates_against_slack_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(_manifest()), key=str)
    assert errors == []


def test_manifest_declares_command_interactivity_home_and_socket_mode() -> None:
    manifest = _manifest()
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/csb"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["settings"]["event_subscriptions"]["bot_events"] == ["app_home_opened"]
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == CONTRACT_SCOPES


def test_schema_rejects_a_broken_manifest() -> None:
    """The check above can fail: a manifest without display_information is refused."""
    schema = json.loads(SCHEMA.read_text())
    broken = _manifest()
    del broken["display_information"]
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))


def test_check_asks_for_the_scopes_the_manifest_asks_for() -> None:
    """`csb-bot check` names the scopes a token lacks against BOT_SCOPES: they must be the manifest's."""
    assert set(_manifest()["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES) == CONTRACT_SCOPES
