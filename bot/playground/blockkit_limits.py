"""Block Kit limits Slack enforces on the server side, checked the same way here.

A card that renders in the playground but that Slack would refuse is the worst kind of surprise, so
the stand-in refuses it too, by the numbers the views cut to (`bot/domain/slack_limits.py`). Everything
here is pure: a payload goes in, Slack-worded errors come out, each ending in a JSON pointer
(`[json-pointer:/blocks/0/text/text]`) as in Slack's `errors` list.
"""

from __future__ import annotations

from typing import Any

from bot.domain.slack_limits import (
    MAX_ACTIONS_ELEMENTS,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_CONTEXT_ELEMENTS,
    MAX_FIELD_TEXT,
    MAX_HEADER_TEXT,
    MAX_ID,
    MAX_LABEL,
    MAX_MESSAGE_BLOCKS,
    MAX_MESSAGE_TEXT,
    MAX_OPTION_TEXT,
    MAX_OPTION_VALUE,
    MAX_PLACEHOLDER,
    MAX_PRIVATE_METADATA,
    MAX_SECTION_FIELDS,
    MAX_SECTION_TEXT,
    MAX_SELECT_OPTIONS,
    MAX_URL,
    MAX_VIEW_BLOCKS,
    MAX_VIEW_TITLE,
)

BLOCK_TYPES = frozenset(
    {
        "actions",
        "context",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "markdown",
        "rich_text",
        "section",
        "table",
        "video",
    }
)
TEXT_TYPES = frozenset({"plain_text", "mrkdwn"})
VIEW_TYPES = frozenset({"modal", "home"})
BUTTON_STYLES = frozenset({"primary", "danger"})


class _Errors:
    """Collects Slack-worded errors; each check appends and never raises, so one reply lists them all."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(f"{message} [json-pointer:{path}]")

    def string(self, value: Any, path: str, limit: int, required: bool = False) -> None:
        if value is None:
            if required:
                self.add(path, "must provide a string")
            return
        if not isinstance(value, str):
            self.add(path, "must be a string")
        elif required and not value:
            self.add(path, "must be more than 0 characters")
        elif len(value) > limit:
            self.add(path, f"must be less than {limit + 1} characters")

    def text(self, obj: Any, path: str, limit: int, plain_only: bool = False) -> None:
        if not isinstance(obj, dict):
            self.add(path, "must provide an object")
            return
        allowed = {"plain_text"} if plain_only else TEXT_TYPES
        if obj.get("type") not in allowed:
            self.add(f"{path}/type", f"must be one of {sorted(allowed)}")
        self.string(obj.get("text"), f"{path}/text", limit, required=True)

    def array(self, value: Any, path: str, limit: int, required: bool = True) -> list[Any]:
        if value is None and not required:
            return []
        if not isinstance(value, list):
            self.add(path, "must provide an array")
            return []
        if required and not value:
            self.add(path, "must provide at least 1 item")
        if len(value) > limit:
            self.add(path, f"no more than {limit} items allowed")
        return value


def message_text_too_long(text: Any) -> bool:
    """Slack answers `msg_too_long` (not `invalid_blocks`) for an over-long top-level `text`."""
    return isinstance(text, str) and len(text) > MAX_MESSAGE_TEXT


def check_message_blocks(blocks: Any) -> list[str]:
    """Errors for the `blocks` of chat.postMessage / chat.update / chat.postEphemeral / response_url."""
    errors = _Errors()
    _check_blocks(errors, blocks, "/blocks", MAX_MESSAGE_BLOCKS)
    return errors.items


def check_view(view: Any) -> list[str]:
    """Errors for the `view` of views.open / views.update / views.publish (modal or home tab)."""
    errors = _Errors()
    if not isinstance(view, dict):
        errors.add("/view", "must provide an object")
        return errors.items
    kind = view.get("type")
    if kind not in VIEW_TYPES:
        errors.add("/view/type", f"must be one of {sorted(VIEW_TYPES)}")
    blocks = view.get("blocks")
    _check_blocks(errors, blocks, "/view/blocks", MAX_VIEW_BLOCKS)
    errors.string(view.get("private_metadata"), "/view/private_metadata", MAX_PRIVATE_METADATA)
    errors.string(view.get("callback_id"), "/view/callback_id", MAX_ID)
    errors.string(view.get("external_id"), "/view/external_id", MAX_ID)
    if kind == "modal":
        _check_modal_chrome(errors, view, blocks)
    return errors.items


def _check_modal_chrome(errors: _Errors, view: dict[str, Any], blocks: Any) -> None:
    errors.text(view.get("title"), "/view/title", MAX_VIEW_TITLE, plain_only=True)
    for key in ("submit", "close"):
        if view.get(key) is not None:
            errors.text(view[key], f"/view/{key}", MAX_VIEW_TITLE, plain_only=True)
    has_input = isinstance(blocks, list) and any(
        isinstance(b, dict) and b.get("type") == "input" for b in blocks
    )
    if has_input and view.get("submit") is None:
        errors.add("/view/submit", "must provide a submit button when the view has input blocks")


def _check_blocks(errors: _Errors, blocks: Any, path: str, limit: int) -> None:
    seen_ids: set[str] = set()
    for i, block in enumerate(errors.array(blocks, path, limit, required=False)):
        here = f"{path}/{i}"
        if not isinstance(block, dict):
            errors.add(here, "must provide an object")
            continue
        kind = block.get("type")
        if kind not in BLOCK_TYPES:
            errors.add(f"{here}/type", f"unsupported type: {kind!r}")
            continue
        block_id = block.get("block_id")
        errors.string(block_id, f"{here}/block_id", MAX_ID)
        if isinstance(block_id, str):
            if block_id in seen_ids:
                errors.add(f"{here}/block_id", "must be unique within the blocks")
            seen_ids.add(block_id)
        _BLOCK_CHECKS.get(kind, _check_nothing)(errors, block, here)


def _check_nothing(errors: _Errors, block: dict[str, Any], path: str) -> None:
    """Block types whose inner limits the bot never comes near (divider, rich_text, …)."""


def _check_section(errors: _Errors, block: dict[str, Any], path: str) -> None:
    if block.get("text") is None and block.get("fields") is None:
        errors.add(path, "must provide text or fields")
    if block.get("text") is not None:
        errors.text(block["text"], f"{path}/text", MAX_SECTION_TEXT)
    fields = errors.array(block.get("fields"), f"{path}/fields", MAX_SECTION_FIELDS, required=False)
    for i, field in enumerate(fields):
        errors.text(field, f"{path}/fields/{i}", MAX_FIELD_TEXT)
    if block.get("accessory") is not None:
        _check_element(errors, block["accessory"], f"{path}/accessory")


def _check_header(errors: _Errors, block: dict[str, Any], path: str) -> None:
    errors.text(block.get("text"), f"{path}/text", MAX_HEADER_TEXT, plain_only=True)


def _check_context(errors: _Errors, block: dict[str, Any], path: str) -> None:
    elements = errors.array(block.get("elements"), f"{path}/elements", MAX_CONTEXT_ELEMENTS)
    for i, element in enumerate(elements):
        here = f"{path}/elements/{i}"
        if isinstance(element, dict) and element.get("type") == "image":
            errors.string(element.get("alt_text"), f"{here}/alt_text", MAX_LABEL, required=True)
        else:
            errors.text(element, here, MAX_SECTION_TEXT)


def _check_actions(errors: _Errors, block: dict[str, Any], path: str) -> None:
    elements = errors.array(block.get("elements"), f"{path}/elements", MAX_ACTIONS_ELEMENTS)
    for i, element in enumerate(elements):
        _check_element(errors, element, f"{path}/elements/{i}")


def _check_image(errors: _Errors, block: dict[str, Any], path: str) -> None:
    if block.get("image_url") is None and block.get("slack_file") is None:
        errors.add(path, "must provide image_url or slack_file")
    errors.string(block.get("image_url"), f"{path}/image_url", MAX_URL)
    errors.string(block.get("alt_text"), f"{path}/alt_text", MAX_LABEL, required=True)


def _check_input(errors: _Errors, block: dict[str, Any], path: str) -> None:
    errors.text(block.get("label"), f"{path}/label", MAX_LABEL, plain_only=True)
    if block.get("hint") is not None:
        errors.text(block["hint"], f"{path}/hint", MAX_LABEL, plain_only=True)
    _check_element(errors, block.get("element"), f"{path}/element")


def _check_element(errors: _Errors, element: Any, path: str) -> None:
    if not isinstance(element, dict) or not isinstance(element.get("type"), str):
        errors.add(path, "must provide an object with a type")
        return
    errors.string(element.get("action_id"), f"{path}/action_id", MAX_ID)
    if element["type"] == "static_select":
        _check_static_select(errors, element, path)
    if element["type"] != "button":
        return
    errors.text(element.get("text"), f"{path}/text", MAX_BUTTON_TEXT, plain_only=True)
    errors.string(element.get("value"), f"{path}/value", MAX_BUTTON_VALUE)
    errors.string(element.get("url"), f"{path}/url", MAX_URL)
    if element.get("style") is not None and element["style"] not in BUTTON_STYLES:
        errors.add(f"{path}/style", f"must be one of {sorted(BUTTON_STYLES)}")


def _check_static_select(errors: _Errors, element: dict[str, Any], path: str) -> None:
    if element.get("placeholder") is not None:
        errors.text(element["placeholder"], f"{path}/placeholder", MAX_PLACEHOLDER, plain_only=True)
    options = element.get("options")
    if not isinstance(options, list) or not 1 <= len(options) <= MAX_SELECT_OPTIONS:
        errors.add(f"{path}/options", f"must provide 1 to {MAX_SELECT_OPTIONS} options")
        return
    for index, option in enumerate(options):
        here = f"{path}/options/{index}"
        if not isinstance(option, dict):
            errors.add(here, "must provide an object")
            continue
        errors.text(option.get("text"), f"{here}/text", MAX_OPTION_TEXT, plain_only=True)
        errors.string(option.get("value"), f"{here}/value", MAX_OPTION_VALUE, required=True)
        if option.get("description") is not None:
            errors.text(option["description"], f"{here}/description", MAX_OPTION_TEXT, plain_only=True)


_BLOCK_CHECKS = {
    "section": _check_section,
    "header": _check_header,
    "context": _check_context,
    "actions": _check_actions,
    "image": _check_image,
    "input": _check_input,
}
