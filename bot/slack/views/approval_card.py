"""The approval card: the five parameters a person approves, and what became of the request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.domain.spec import RunSpec
from bot.slack.ids import ActionId
from bot.slack.views.format import suite_text, user, when
from bot.store.models import RequestState


@dataclass(frozen=True)
class CardView:
    request_id: int
    spec: RunSpec
    spec_hash: str
    requester: str
    state: RequestState
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None


def approval_card(card: CardView) -> list[Block]:
    blocks: list[Block] = [
        HeaderBlock(text=f"CSB run request #{card.request_id}"),
        SectionBlock(fields=_parameter_fields(card.spec)),
        ContextBlock(
            elements=[
                MarkdownTextObject(text=f"Requested by {user(card.requester)} · spec `{card.spec_hash[:12]}`")
            ]
        ),
    ]
    blocks.append(_decision(card))
    return blocks


def card_fallback_text(card: CardView) -> str:
    """The notification text: what a push or a screen reader says for the card."""
    spec = card.spec
    return (
        f"CSB run request #{card.request_id} ({card.state.value}): {spec.params.model} on "
        f"{spec.suite_label}, {len(spec.tasks)} tasks"
    )


def _parameter_fields(spec: RunSpec) -> list[MarkdownTextObject]:
    params = spec.params
    parallel = f"{spec.parallel} slots" + ("" if params.parallel else " (default)")
    pairs = [
        ("Model", f"`{params.model}`"),
        ("Suite", suite_text(spec)),
        ("Config", f"`{params.mode.value}` · full config `{params.full_config}`"),
        ("Parallel", parallel),
        ("Category", f"`{params.category.value}`"),
        ("Tasks", f"{len(spec.tasks)} tasks · {spec.lane_count} lanes"),
    ]
    return [MarkdownTextObject(text=f"*{name}*\n{value}") for name, value in pairs]


def _decision(card: CardView) -> Block:
    if card.state is RequestState.PENDING:
        return ActionsBlock(
            block_id=f"decision:{card.request_id}",
            elements=[
                ButtonElement(
                    text="Approve", action_id=ActionId.APPROVE, value=str(card.request_id), style="primary"
                ),
                ButtonElement(
                    text="Reject", action_id=ActionId.REJECT, value=str(card.request_id), style="danger"
                ),
            ],
        )
    at = when(card.decided_at) if card.decided_at else "an unknown time"
    if card.state is RequestState.APPROVED:
        return SectionBlock(
            text=MarkdownTextObject(
                text=f":white_check_mark: *Approved* by {user(card.decided_by or '?')} {at}"
            )
        )
    reason = f": {card.reason}" if card.reason else ""
    return SectionBlock(
        text=MarkdownTextObject(text=f":x: *Rejected* by {user(card.decided_by or '?')} {at}{reason}")
    )
