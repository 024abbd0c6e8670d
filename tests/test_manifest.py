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


def test_the_messages_tab_is_on_since_the_bot_dms_the_report() -> None:
    app_home = _manifest()["features"]["app_home"]
    assert app_home["messages_tab_enabled"] is True
    assert app_home["messages_tab_read_only_enabled"] is True  # the bot reads no DMs, so none are asked for


def test_every_placeholder_is_named_as_such_in_a_comment() -> None:
    """A user replaces what the comments at the top name; nothing else in the file is to be filled in."""
    text = (ROOT / "manifest.yml").read_text()
    manifest = _manifest()
    urls = [
        manifest["features"]["slash_commands"][0]["url"],
        manifest["settings"]["event_subscriptions"]["request_url"],
        manifest["settings"]["interactivity"]["request_url"],
    ]
    placeholder = "https://csb-bot.example.com/slack/events"
    assert urls == [placeholder] * 3
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert f"Placeholders: {placeholder}, in three places" in header
    values = [line for line in text.splitlines() if placeholder in line and not line.startswith("#")]
    assert len(values) == 3 and all(line.endswith("# placeholder (HTTP only)") for line in values)
    assert text.count(placeholder) == 4  # the three, and the comment naming them


def test_check_asks_for_the_scopes_the_manifest_asks_for() -> None:
    """`csb-bot check` names the scopes a token lacks against BOT_SCOPES: they must be the manifest's."""
    assert set(_manifest()["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES) == CONTRACT_SCOPES
