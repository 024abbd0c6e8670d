"""Read the Edit and Reject modals' submitted values back into typed values, with per-field errors."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import ValidationError

from bot.domain.command_line import text_problem
from bot.domain.errors import UserInputError
from bot.domain.limits import REASON_CHARS
from bot.domain.spec import RunParams
from bot.slack.views.edit_modal import EDITABLE_FIELDS, VALUE_ACTION, field_block_id, field_kind
from bot.slack.views.reject_modal import REASON_ACTION, REASON_BLOCK


class FormErrors(UserInputError):
    """Errors keyed by block id, returned to Slack as `response_action: errors` so the modal stays open."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def params_from_form(values: dict[str, dict[str, Any]]) -> RunParams:
    raw = {
        field: _read(field, values.get(field_block_id(field), {}).get(VALUE_ACTION, {}))
        for field in EDITABLE_FIELDS
    }
    given = {field: value for field, value in raw.items() if value is not None}
    problems = {  # the checks `/csb run` makes of the same text
        field_block_id(field): f"This {problem}."
        for field, value in given.items()
        if isinstance(value, str) and (problem := text_problem(field, value))
    }
    if problems:
        raise FormErrors(problems)
    try:
        return RunParams(**given)
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "model"
            errors[field_block_id(field)] = _message(field, error)
        raise FormErrors(errors) from exc


def reason_from_form(values: dict[str, dict[str, Any]]) -> str:
    reason = str(values.get(REASON_BLOCK, {}).get(REASON_ACTION, {}).get("value") or "").strip()
    if len(reason) < 3:
        raise FormErrors({REASON_BLOCK: "Say why, in a few words: the requester sees it on the card."})
    if len(reason) > REASON_CHARS:
        raise FormErrors({REASON_BLOCK: f"At most {REASON_CHARS} characters; this is {len(reason):,}."})
    return reason


def _read(field: str, element: dict[str, Any]) -> Any:
    kind = field_kind(field)
    if kind is bool:
        return bool(element.get("selected_options"))
    if isinstance(kind, type) and issubclass(kind, Enum):
        option = element.get("selected_option") or {}
        return option.get("value")
    value = element.get("value")
    if value is None or str(value).strip() == "":
        return None
    return str(value).strip()


def _message(field: str, error: Any) -> str:
    kind = field_kind(field)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return "Choose one of: " + ", ".join(str(m.value) for m in kind)
    if kind is int:
        return "A whole number, 1 or more."
    return str(error.get("msg", "Invalid value"))
