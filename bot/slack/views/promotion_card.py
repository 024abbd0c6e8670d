"""The promotion card: CSB's dry run as the card showed it, the bypass of `--force` shown loudly, the
steps as the journal has them, and Approve/Reject while it may be decided."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.domain.promotion_flow import STEPS, Phase, PromotionCardView, PromotionState
from bot.domain.slack_limits import MAX_MESSAGE_BLOCKS
from bot.slack.ids import ActionId
from bot.slack.views.format import shown, user
from bot.slack.views.promotion import promotion_text

_MAX_PREVIEW_SECTIONS = MAX_MESSAGE_BLOCKS - 10  # room for the card's other blocks
_STATES = {
    PromotionState.PENDING: "waiting for approval",
    PromotionState.APPROVED: "approved: waiting for runs/official to be free",
    PromotionState.EXECUTING: "being promoted, step by step",
    PromotionState.PROMOTED: ":white_check_mark: PROMOTED: the run is official",
    PromotionState.UNDONE: ":x: UNDONE: the run is back in runs/staging as it was, runs/official unchanged",
    PromotionState.LOST: ":x: LOST: the run folder is in neither runs/staging nor runs/official",
    PromotionState.REJECTED: "REJECTED",
    PromotionState.VOID: "VOID: the run's files or the MANIFEST changed since this card was drawn",
}
_MARKS = {
    Phase.STARTED: ":hourglass_flowing_sand:",
    Phase.DONE: ":white_check_mark:",
    Phase.SKIPPED: ":heavy_minus_sign:",
    Phase.FAILED: ":x:",
}


def promotion_card_text(view: PromotionCardView) -> str:
    return f"Promotion #{view.promotion_id} of run #{view.run_id}: {_STATES[view.state]}"


def promotion_card(view: PromotionCardView) -> list[Block]:
    head = (
        f"*Promotion #{view.promotion_id}* of run #{view.run_id} to `runs/official`, asked by "
        f"{user(view.requester)}: {_STATES[view.state]}"
    )
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=head))]
    if view.force:
        bypassed = [
            f"{gate.name.value} ({gate.count})"
            for folder in view.preview.folders
            if folder.gates is not None
            for gate in folder.gates.failed
        ]
        what = (
            ", ".join(bypassed) or "no failed gate (a taken destination gets a `__promoted_<stamp>` suffix)"
        )
        blocks.append(
            SectionBlock(
                text=MarkdownTextObject(
                    text=f":rotating_light: *--force: CSB's gates are bypassed* — {shown(what, 1500)}. "
                    "Only an override approver may approve it."
                )
            )
        )
    parts = promotion_text(view.preview)
    blocks += [SectionBlock(text=MarkdownTextObject(text=part)) for part in parts[:_MAX_PREVIEW_SECTIONS]]
    choice = (
        "chosen: those tasks are set aside first" if view.quarantine else "not chosen (`--quarantine` to)"
    )
    if any(folder.quarantine for folder in view.preview.folders):
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=f"Quarantine: {choice}")]))
    blocks += _decision_blocks(view)
    return blocks


def _decision_blocks(view: PromotionCardView) -> list[Block]:
    blocks: list[Block] = []
    if view.approvers:
        who = ", ".join(user(u) for u in view.approvers)
        blocks.append(
            ContextBlock(
                elements=[
                    MarkdownTextObject(
                        text=f"Approved by {who} ({len(view.approvers)} of {view.approvals_needed})"
                    )
                ]
            )
        )
    if view.decided_by and view.state is PromotionState.REJECTED:
        blocks.append(
            ContextBlock(elements=[MarkdownTextObject(text=f"Rejected by {user(view.decided_by)}")])
        )
    if view.journal:
        done = {entry.step: entry for entry in view.journal}
        lines = []
        for step in STEPS:
            entry = done.get(step)
            if entry is None:
                lines.append(f":hourglass: {step.value} (not yet)")
            else:
                note = f": {shown(entry.note, 300)}" if entry.note else ""
                lines.append(f"{_MARKS[entry.phase]} {step.value}{note}")
        blocks.append(SectionBlock(text=MarkdownTextObject(text="*Steps*\n" + "\n".join(lines))))
    if view.error:
        restart = (
            " (settled by the bot process that took over, after a restart or a lost timer lease)"
            if view.after_restart
            else ""
        )
        label = ":warning: *Void*" if view.state is PromotionState.VOID else ":x: *Failed*"
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=f"{label}{restart}: {shown(view.error, 1500)}"))
        )
    if view.state is PromotionState.PENDING:
        elements = [
            ButtonElement(text="Reject", action_id=ActionId.PROMOTION_REJECT, value=str(view.promotion_id))
        ]
        if view.approvable:
            elements.insert(
                0,
                ButtonElement(
                    text="Approve",
                    action_id=ActionId.PROMOTION_APPROVE,
                    value=str(view.promotion_id),
                    style="danger" if view.force else "primary",
                ),
            )
        else:
            blocks.append(
                ContextBlock(
                    elements=[
                        MarkdownTextObject(
                            text="No Approve: a gate failed or the MANIFEST cannot be read "
                            "(`--force` bypasses CSB's gates, not an unreadable MANIFEST "
                            "or a missing folder)."
                        )
                    ]
                )
            )
        blocks.append(ActionsBlock(block_id=f"promotion:{view.promotion_id}", elements=elements))
    return blocks
