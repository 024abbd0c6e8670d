"""The approval card: the five parameters, the checks, and what became of the request."""

from __future__ import annotations

import re
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

from bot.domain.policy import BOT_ACTOR
from bot.domain.spec import RunSpec
from bot.domain.states import RequestState
from bot.domain.words import plural
from bot.services.checks import CheckLine, RequestChecks
from bot.slack.ids import ActionId
from bot.slack.inbound.payloads import decision_value
from bot.slack.views.estimate import budget_lines_text, estimate_text
from bot.slack.views.format import (
    CONTEXT_LIMIT,
    FIELD_LIMIT,
    MESSAGE_TEXT_LIMIT,
    SECTION_LIMIT,
    clip,
    code,
    escape,
    shown,
    suite_text,
    user,
    when,
)
from bot.slack.views.run_card import RunCardView, run_blocks

MISSING_SHOWN = 10
CHECK_SHOWN = 1000  # one preflight finding (a script's words, a list of missing folders)
REASON_SHOWN = 1500  # a reason on the card; the audit trail keeps it whole
# Harbor's model string: `<provider>/<name>` (LiteLLM's), no spaces; anything else is flagged.
_MODEL_SHAPE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.:@/+-]+")


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
    rerun_of: str | None = None  # "Rerun of #1: 2 failed, 0 errored lanes" when it reruns failures
    budget_override_by: str | None = None  # who approved it past its monthly budget's block line


def approval_card(card: CardView) -> list[Block]:
    blocks: list[Block] = [
        HeaderBlock(text=f"CSB run request #{card.request_id}"),
    ]
    if card.rerun_of:
        blocks.append(_text(f":repeat: {card.rerun_of}"))
    blocks.append(SectionBlock(fields=_parameter_fields(card.spec)))
    warning = model_warning(card.spec.params.model)
    if warning:
        blocks.append(_text(warning))
    if card.checks.unpaired_override:
        blocks.append(
            _text(
                ":rotating_light: *UNPAIRED OVERRIDE* (`--allow-unpaired`): this single-lane run does not "
                "wait for counterpart results; it needs an approver allowed for overrides and is recorded "
                "in the audit."
            )
        )
    blocks += _checks(card.checks)
    blocks += _spend(card)
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
    text = (
        f"CSB run request #{card.request_id} ({card.state.value}): {shown(spec.params.model)} on "
        f"{shown(spec.suite_label)}, {plural(len(spec.tasks), 'task')}"
    )
    return clip(text, MESSAGE_TEXT_LIMIT)


def model_warning(model: str) -> str | None:
    """A model string Harbor would not take as `<provider>/<name>` is flagged before anyone approves it."""
    if _MODEL_SHAPE.fullmatch(model):
        return None
    return escape(
        ":warning: The model is not of the form `<provider>/<name>` "
        "(e.g. `anthropic/claude-haiku-4-5-20251001`); Harbor may not run it as meant."
    )


def _parameter_fields(spec: RunSpec) -> list[MarkdownTextObject]:
    params = spec.params
    parallel = plural(spec.parallel, "slot") + ("" if params.parallel else " (default)")
    pairs = [
        ("Model", code(params.model, FIELD_LIMIT // 2)),
        ("Suite", suite_text(spec)),
        ("Config", f"`{params.mode.value}` · full config {code(params.full_config)}"),
        ("Parallel", parallel),
        ("Category", f"`{params.category.value}`"),
        ("Tasks", f"{plural(len(spec.tasks), 'task')} · {plural(spec.lane_count, 'lane')}"),
    ]
    return [MarkdownTextObject(text=clip(f"*{name}*\n{value}", FIELD_LIMIT)) for name, value in pairs]


def _checks(checks: RequestChecks) -> list[Block]:
    lines = check_lines(checks)
    if not lines:
        return []
    return [_text("*Preflight*\n" + "\n".join(lines))]


def _spend(card: CardView) -> list[Block]:
    """The estimate always; the budget lines while it waits for a decision (they are measured now), and
    afterwards, loudly, who approved it past the block line. A request made before estimates were kept
    (or by a bot without them) shows none, rather than a "no history" nobody looked for."""
    lines = [estimate_text(card.checks.estimate)] if card.checks.estimate is not None else []
    if card.state is RequestState.PENDING:
        lines += budget_lines_text(card.checks.budget)
    elif card.budget_override_by:
        lines.append(
            f":rotating_light: *BUDGET OVERRIDE*: approved past the monthly budget's block line by "
            f"{user(card.budget_override_by)}; the budget does not drain this run."
        )
    return [_text("\n".join(lines))] if lines else []


def check_lines(checks: RequestChecks) -> list[str]:
    """One line per preflight finding and the pairing guard, as the card and `--dry-run` show them."""
    lines = [f"{_mark(line)} {shown(line.message, CHECK_SHOWN)}" for line in checks.lines]
    if checks.missing_counterparts:
        missing = checks.missing_counterparts
        listed = ", ".join(code(task, 100) for task in missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        mark = ":warning:" if checks.unpaired_override else ":x:"
        lines.append(f"{mark} No clean counterpart result for {plural(len(missing), 'task')}: {listed}{more}")
    return lines


def _mark(line: CheckLine) -> str:
    """✅ only for a check that ran and passed; one that did not run says so."""
    if line.skipped:
        return ":heavy_minus_sign: _skipped:_"
    if line.ok:
        return ":white_check_mark:"
    return ":x:" if line.blocking else ":warning:"


def _context(card: CardView) -> Block:
    parts = [
        f"Requested by {user(card.requester)}",
        f"spec `{card.spec_hash[:12]}`",
        f"revision {card.revision}",
    ]
    if card.state is RequestState.PENDING and card.expires_at:
        parts.append(f"expires {when(card.expires_at)}")
    return ContextBlock(elements=[MarkdownTextObject(text=clip(" · ".join(parts), CONTEXT_LIMIT))])


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
    by = "the bot" if card.decided_by == BOT_ACTOR else user(card.decided_by or "?")
    reason = f": {shown(card.reason, REASON_SHOWN)}" if card.reason else ""
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
        reasons = "; ".join(shown(reason, CHECK_SHOWN) for reason in card.checks.blocking_reasons)
        return ":no_entry: *Approve is disabled*: " + reasons
    if card.approvals_needed > 1 or card.approvals:
        who = ", ".join(user(u) for u in card.approvals) or "none yet"
        return f"Approvals: {len(card.approvals)} of {card.approvals_needed} ({who})"
    return None


def _text(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_LIMIT)))
