"""The approval card: the five parameters, the checks, and what became of the request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
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
from bot.services.checks import RequestChecks
from bot.slack.ids import ActionId
from bot.slack.payloads import decision_value
from bot.slack.views.format import SECTION_LIMIT, suite_text, user, when
from bot.slack.views.run_card import RunCardView, run_blocks
from bot.store.models import RequestState

MISSING_SHOWN = 10


@dataclass(frozen=True)
class CardView:
    request_id: int
    spec: RunSpec
    spec_hash: str
    requester: str
    state: RequestState
    revision: int = 1
    checks: RequestChecks = field(default_factory=RequestChecks)
    approvals: Sequence[str] = ()
    approvals_needed: int = 1
    change_note: str | None = None
    expires_at: datetime | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None
    run: RunCardView | None = None  # once approved, the card is the run's status card


def approval_card(card: CardView) -> list[Block]:
    blocks: list[Block] = [
        HeaderBlock(text=f"CSB run request #{card.request_id}"),
        SectionBlock(fields=_parameter_fields(card.spec)),
    ]
    if card.checks.unpaired_override:
        blocks.append(
            _text(
                ":rotating_light: *UNPAIRED OVERRIDE* (`--allow-unpaired`): this single-lane run does not "
                "wait for counterpart results; it needs an approver allowed for overrides and is recorded "
                "in the audit."
            )
        )
    blocks += _checks(card.checks)
    if card.change_note:
        blocks.append(_text(f":pencil2: {card.change_note}"))
    note = pending_note(card)
    if note:
        blocks.append(_text(note))
    blocks.append(_context(card))
    blocks.append(_decision(card))
    if card.run is not None:
        blocks += run_blocks(card.run)
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


def _checks(checks: RequestChecks) -> list[Block]:
    lines = check_lines(checks)
    if not lines:
        return []
    return [_text("*Preflight*\n" + "\n".join(lines))]


def check_lines(checks: RequestChecks) -> list[str]:
    """One line per preflight finding and the pairing guard, as the card and `--dry-run` show them."""
    lines = [
        f"{':white_check_mark:' if line.ok else (':x:' if line.blocking else ':warning:')} {line.message}"
        for line in checks.lines
    ]
    if checks.missing_counterparts:
        missing = checks.missing_counterparts
        shown = ", ".join(f"`{task}`" for task in missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        mark = ":warning:" if checks.unpaired_override else ":x:"
        lines.append(f"{mark} No clean counterpart result for {len(missing)} task(s): {shown}{more}")
    return lines


def _context(card: CardView) -> Block:
    parts = [
        f"Requested by {user(card.requester)}",
        f"spec `{card.spec_hash[:12]}`",
        f"revision {card.revision}",
    ]
    if card.state is RequestState.PENDING and card.expires_at:
        parts.append(f"expires {when(card.expires_at)}")
    return ContextBlock(elements=[MarkdownTextObject(text=" · ".join(parts))])


def _decision(card: CardView) -> Block:
    if card.state is RequestState.PENDING:
        return _pending(card)
    at = when(card.decided_at) if card.decided_at else "an unknown time"
    if card.state is RequestState.APPROVED:
        who = ", ".join(user(u) for u in card.approvals) or user(card.decided_by or "?")
        return _text(f":white_check_mark: *Approved* by {who} {at}")
    if card.state is RequestState.EXPIRED:
        return _text(
            f":hourglass: *EXPIRED* {at}: no decision in time. "
            "It can no longer be approved; request it again."
        )
    by = "the bot" if card.decided_by == "csb-bot" else user(card.decided_by or "?")
    reason = f": {card.reason}" if card.reason else ""
    return _text(f":x: *Rejected* by {by} {at}{reason}")


def _pending(card: CardView) -> Block:
    blocking = card.checks.blocking_reasons
    value = decision_value(card.request_id, card.revision)
    buttons: list[ButtonElement] = []
    if not blocking:
        buttons.append(
            ButtonElement(text="Approve", action_id=ActionId.APPROVE, value=value, style="primary")
        )
    buttons += [
        ButtonElement(text="Reject", action_id=ActionId.REJECT, value=value, style="danger"),
        ButtonElement(text="Edit", action_id=ActionId.EDIT, value=value),
    ]
    return ActionsBlock(block_id=f"decision:{card.request_id}:{card.revision}", elements=buttons)


def pending_note(card: CardView) -> str | None:
    """Approval progress or why Approve is missing; None when there is nothing to say."""
    if card.state is not RequestState.PENDING:
        return None
    if card.checks.blocking_reasons:
        return ":no_entry: *Approve is disabled*: " + "; ".join(card.checks.blocking_reasons)
    if card.approvals_needed > 1 or card.approvals:
        who = ", ".join(user(u) for u in card.approvals) or "none yet"
        return f"Approvals: {len(card.approvals)} of {card.approvals_needed} ({who})"
    return None


def _text(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text[:SECTION_LIMIT]))
