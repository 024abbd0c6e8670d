"""The Edit modal: one input per run parameter, generated from `RunParams` so it matches /csb run."""

from __future__ import annotations

import types
import typing
from enum import Enum
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    InputBlock,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.domain.spec import RunParams
from bot.slack.ids import CallbackId

EDITABLE_FIELDS = tuple(name for name in RunParams.model_fields if name != "dry_run")
VALUE_ACTION = "value"
_LABELS = {"suite": "Suite key", "suite_file": "Suite file", "selection_file": "Selection file"}


def field_block_id(field: str) -> str:
    return f"edit.{field}"


def edit_modal(request_id: int, revision: int, params: RunParams) -> View:
    """Prefilled with the request's current parameters; private_metadata carries only `<id>:<revision>`."""
    return View(
        type="modal",
        callback_id=CallbackId.EDIT,
        private_metadata=f"{request_id}:{revision}",
        title="Edit run request",
        submit="Save",
        close="Cancel",
        blocks=[_input(field, getattr(params, field)) for field in EDITABLE_FIELDS],
    )


def field_kind(field: str) -> Any:
    """The field's type without `| None`."""
    annotation = RunParams.model_fields[field].annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return next(a for a in typing.get_args(annotation) if a is not type(None))
    return annotation


def _input(field: str, value: Any) -> Block:
    info = RunParams.model_fields[field]
    kind = field_kind(field)
    label = _LABELS.get(field, field.replace("_", " ").capitalize())
    optional = kind is bool or info.default is None or field in ("model", "full_config")
    return InputBlock(
        block_id=field_block_id(field),
        label=label,
        hint=info.description,
        optional=optional,
        element=_element(kind, value),
    )


def _element(kind: Any, value: Any) -> Any:
    if isinstance(kind, type) and issubclass(kind, Enum):
        options = [Option(value=str(m.value), text=str(m.value)) for m in kind]
        initial = next((o for o in options if o.value == str(getattr(value, "value", value))), None)
        return StaticSelectElement(action_id=VALUE_ACTION, options=options, initial_option=initial)
    if kind is bool:
        option = Option(value="yes", text="Yes")
        return CheckboxesElement(
            action_id=VALUE_ACTION, options=[option], initial_options=[option] if value else None
        )
    if kind is int:
        return NumberInputElement(
            action_id=VALUE_ACTION,
            is_decimal_allowed=False,
            initial_value=None if value is None else str(value),
        )
    return PlainTextInputElement(action_id=VALUE_ACTION, initial_value=value or None)
