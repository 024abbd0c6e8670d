"""What Slack sends an app, built from the stand-in's state: commands, clicks, submissions, events.

Pure functions: the driver gathers the state (user, channel, stored message or view) and signs the
result. Field sets follow what Slack sends today, so Bolt's parsing and matching run for real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.playground.users import PlayUser
from bot.playground.workspace import Channel

VERIFICATION_TOKEN = "playground-verification-token"
"""Slack still sends the deprecated verification token; Bolt ignores it, so any value does."""


@dataclass(frozen=True, slots=True)
class AppContext:
    """The team and app a payload comes from."""

    team_id: str
    team_domain: str
    app_id: str
    bot_user_id: str


@dataclass(frozen=True, slots=True)
class Button:
    """A button found in stored blocks, with the block it sits in."""

    block_id: str
    action_id: str
    text: str
    value: str | None
    style: str | None = None


def slash_command_form(
    app: AppContext,
    user: PlayUser,
    channel: Channel,
    command: str,
    text: str,
    response_url: str,
    trigger_id: str,
) -> dict[str, str]:
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": app.team_id,
        "team_domain": app.team_domain,
        "channel_id": channel.id,
        "channel_name": "directmessage" if channel.dm_user else channel.name,
        "user_id": user.id,
        "user_name": user.name,
        "command": command,
        "text": text,
        "api_app_id": app.app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


@dataclass(frozen=True, slots=True)
class Choice:
    """An option chosen in a static select found in stored blocks."""

    block_id: str
    action_id: str
    option: dict[str, Any]
    placeholder: dict[str, Any] | None = None


def block_actions_payload(
    app: AppContext,
    user: PlayUser,
    channel: Channel,
    message: dict[str, Any],
    button: Button | Choice,
    response_url: str,
    trigger_id: str,
    action_ts: str,
) -> dict[str, Any]:
    """A click on a button of a channel message, or a choice in one of its static selects; `message` is
    the message as it is stored now."""
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": message["ts"],
        "channel_id": channel.id,
        "is_ephemeral": False,
    }
    if message.get("thread_ts") and message["thread_ts"] != message["ts"]:
        container["thread_ts"] = message["thread_ts"]
    shown = {k: v for k, v in message.items() if k != "metadata"}
    return {
        "type": "block_actions",
        "user": _user(user, app),
        "api_app_id": app.app_id,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": app.team_id, "domain": app.team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel.id, "name": channel.name},
        "message": shown,
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [
            _button_action(button, action_ts) if isinstance(button, Button) else _choice(button, action_ts)
        ],
    }


def ephemeral_block_actions_payload(
    app: AppContext,
    user: PlayUser,
    channel: Channel,
    ephemeral: dict[str, Any],
    button: Button,
    response_url: str,
    trigger_id: str,
    action_ts: str,
) -> dict[str, Any]:
    """A click on a button of an ephemeral message: Slack marks the container `is_ephemeral` and sends
    no `message` (the app never stored one); the response_url answers the clicker."""
    return {
        "type": "block_actions",
        "user": _user(user, app),
        "api_app_id": app.app_id,
        "token": VERIFICATION_TOKEN,
        "container": {
            "type": "message",
            "message_ts": ephemeral["ts"],
            "channel_id": channel.id,
            "is_ephemeral": True,
        },
        "trigger_id": trigger_id,
        "team": {"id": app.team_id, "domain": app.team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel.id, "name": channel.name},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [_button_action(button, action_ts)],
    }


def home_block_actions_payload(
    app: AppContext, user: PlayUser, view: dict[str, Any], button: Button, trigger_id: str, action_ts: str
) -> dict[str, Any]:
    """A click on a button of the user's App Home tab: the container is the view, and there is no
    response_url (Slack gives none for view surfaces)."""
    return {
        "type": "block_actions",
        "user": _user(user, app),
        "api_app_id": app.app_id,
        "token": VERIFICATION_TOKEN,
        "container": {"type": "view", "view_id": view.get("id")},
        "trigger_id": trigger_id,
        "team": {"id": app.team_id, "domain": app.team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "view": view,
        "actions": [_button_action(button, action_ts)],
    }


def view_submission_payload(
    app: AppContext,
    user: PlayUser,
    view: dict[str, Any],
    values: dict[str, dict[str, dict[str, Any]]],
    trigger_id: str,
) -> dict[str, Any]:
    """A modal's submit: the stored view with `state.values` filled as the user left the inputs."""
    submitted = {**view, "state": {"values": values}}
    return {
        "type": "view_submission",
        "team": {"id": app.team_id, "domain": app.team_domain},
        "user": _user(user, app),
        "api_app_id": app.app_id,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id,
        "view": submitted,
        "response_urls": [],
        "enterprise": None,
        "is_enterprise_install": False,
    }


def app_home_opened_body(
    app: AppContext,
    user_id: str,
    channel_id: str,
    home: dict[str, Any] | None,
    event_ts: str,
    event_id: str,
) -> dict[str, Any]:
    """An Events API `event_callback`; `view` is present once a home tab was published, as in Slack."""
    event: dict[str, Any] = {
        "type": "app_home_opened",
        "user": user_id,
        "channel": channel_id,
        "tab": "home",
        "event_ts": event_ts,
    }
    if home is not None:
        event["view"] = home
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": app.team_id,
        "api_app_id": app.app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(float(event_ts)),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": app.team_id,
                "user_id": app.bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
    }


def buttons(blocks: list[Any]) -> list[Button]:
    """Every button in actions blocks and section accessories, in display order."""
    found: list[Button] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        elements = block.get("elements", []) if block.get("type") == "actions" else [block.get("accessory")]
        for element in elements:
            if isinstance(element, dict) and element.get("type") == "button":
                found.append(_button(str(block.get("block_id", "")), element))
    return found


def _button(block_id: str, element: dict[str, Any]) -> Button:
    text = element.get("text")
    return Button(
        block_id=block_id,
        action_id=str(element.get("action_id", "")),
        text=str(text.get("text", "")) if isinstance(text, dict) else "",
        value=element.get("value"),
        style=element.get("style"),
    )


def select_choice(blocks: list[Any], action_id: str, option_text: str) -> Choice | None:
    """The option whose text is `option_text` in the static select `action_id` of an actions block."""
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "actions":
            continue
        for element in block.get("elements", []):
            if not (isinstance(element, dict) and element.get("type") == "static_select"):
                continue
            if element.get("action_id") != action_id:
                continue
            for option in element.get("options", []):
                if (option.get("text") or {}).get("text") == option_text:
                    block_id = str(block.get("block_id", ""))
                    return Choice(block_id, action_id, option, element.get("placeholder"))
    return None


def _choice(choice: Choice, action_ts: str) -> dict[str, Any]:
    """What Slack sends for a static select: the chosen option whole, as it was drawn."""
    action: dict[str, Any] = {
        "type": "static_select",
        "action_id": choice.action_id,
        "block_id": choice.block_id,
        "selected_option": choice.option,
        "action_ts": action_ts,
    }
    if choice.placeholder is not None:
        action["placeholder"] = choice.placeholder
    return action


def _button_action(button: Button, action_ts: str) -> dict[str, Any]:
    action: dict[str, Any] = {
        "action_id": button.action_id,
        "block_id": button.block_id,
        "text": {"type": "plain_text", "text": button.text, "emoji": True},
        "type": "button",
        "action_ts": action_ts,
    }
    if button.value is not None:
        action["value"] = button.value
    if button.style is not None:
        action["style"] = button.style
    return action


def _user(user: PlayUser, app: AppContext) -> dict[str, str]:
    return {"id": user.id, "username": user.name, "name": user.name, "team_id": app.team_id}
