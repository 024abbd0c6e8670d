"""A run's events (`bot.domain.events`) in the words its thread shows: one view per kind, registered in
`EVENT_VIEWS`, the one place a new kind gets its words.

Text that came from outside (an executor's error, a script's finding, a user's reason) is stored redacted
and clipped; it is escaped here, so it cannot carry a live mention or link into the thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, MarkdownTextObject, SectionBlock

from bot.domain import events
from bot.domain.events import (
    AccountHeld,
    AccountsFree,
    AccountsHeld,
    AfterBatchRan,
    BudgetDrained,
    Event,
    ExecutorAway,
    ExecutorBack,
    LaneRestarted,
    LaneStalled,
    NotInChannel,
    PromotionEnded,
    RequestEdited,
    RunPaused,
    RunResumed,
    RunStopped,
    RunVoided,
    StillWaiting,
)
from bot.domain.words import agree, plural
from bot.slack.ids import ActionId
from bot.slack.views.format import escape, user

STOP_AND_RETRY = "Stop and retry"  # the stalled lane note's button (a contract label)


def executor_back(_: ExecutorBack) -> str:
    return ":arrow_forward: Lanes start again: the executor answers."


def executor_away(event: ExecutorAway) -> str:
    return (
        f":hourglass: Lanes of this run wait to start: {escape(event.why)}. They start once it answers; "
        "running lanes go on."
    )


_HELD = {
    "drained": "drained",
    "resting": "resting after a rate limit",
    "expired": "its token has expired (or has under 5 minutes left)",
    "not_ready": "not ready by CSB's account_health.py",
    "utilisation": "at or above the utilisation limit",
}


def held_text(held: AccountHeld) -> str:
    """`account2: drained by @carol`: why one account takes no new lane (also `/csb accounts`'s words)."""
    why = _HELD.get(held.why, escape(held.why))
    if held.why == "drained" and held.detail:
        why += f" by {user(held.detail)}"
    elif held.detail:
        why += f" ({escape(held.detail)})"
    return f"`{escape(held.name)}`: {why}"


def accounts_held(event: AccountsHeld) -> str:
    lines = [":hourglass: Lanes of this run wait to start: no account may take a new lane now."]
    lines += [f"• {held_text(held)}" for held in event.accounts]
    lines.append("They start as soon as one may (`/csb accounts` shows each account).")
    return "\n".join(lines)


def accounts_free(_: AccountsFree) -> str:
    return ":arrow_forward: Lanes start again: an account may take them."


def lane_stalled(event: LaneStalled) -> str:
    on = f" on `{escape(event.account)}`" if event.account else ""
    return (
        f":warning: Lane `{escape(event.task_id)}/{escape(event.role)}` (attempt {event.attempt}){on} "
        f"has not changed its log or trial folder for {event.quiet_sec // 60} min. It keeps running; "
        "*Stop and retry* stops it and retries it elsewhere as an infrastructure failure."
    )


def lane_restarted(event: LaneRestarted) -> str:
    names = ", ".join(f"`{escape(name)}`" for name in event.lanes[:20])
    more = f" and {len(event.lanes) - 20} more" if len(event.lanes) > 20 else ""
    why = f"to move off the drained account `{escape(event.account)}`" if event.account else "as stalled"
    return (
        f":arrows_counterclockwise: {user(event.user)} stopped {plural(len(event.lanes), 'lane')} "
        f"({names}{more}) {why}; each is retried elsewhere as an infrastructure failure."
    )


def run_paused(event: RunPaused) -> str:
    advice = [
        f"• `{cause.id}` ({cause.label}): {cause.advice}" for cause in event.causes if cause.label is not None
    ]
    return "\n".join(
        [
            f":pause_button: Run #{event.run_id} is paused: {event.reason()} (threshold "
            f"{event.threshold:.0%}). Running lanes finish; nothing new starts.",
            *advice,
            f"Fix the cause, then `/csb resume {event.run_id}` (or cancel it).",
        ]
    )


def run_voided(event: RunVoided) -> str:
    return (
        f":no_entry: Run #{event.run_id} did not start: {event.note} ({escape(event.drift)}). "
        f"{plural(event.dropped, 'lane')} {agree(event.dropped, 'was', 'were')} dropped before launch; "
        "request it again to run the current tasks."
    )


def budget_drained(event: BudgetDrained) -> str:
    scope = f"`{escape(event.name)}` runs" if event.scope == "category" else f"runs of `{escape(event.name)}`"
    queued = f"{plural(event.dropped, 'queued lane')} dropped"
    running = plural(event.running, "running lane")
    return (
        f":double_vertical_bar: *Over budget*: {scope} have spent ${event.spent_usd:,.2f} in {event.month}, "
        f"past the block line of ${event.block_usd:,.2f} (budget ${event.budget_usd:,.2f}), so the bot "
        f"is draining run #{event.run_id}. No new pairs start ({queued}); {running} "
        f"{agree(event.running, 'finishes', 'finish')}."
    )


def run_stopped(event: RunStopped) -> str:
    reason = escape(event.reason)
    queued = f"{plural(event.dropped, 'queued lane')} dropped"
    running = plural(event.running, "running lane")
    if event.drain:
        return (
            f":double_vertical_bar: {user(event.user)} is draining run #{event.run_id}: {reason}. "
            f"No new pairs start ({queued}); {running} {agree(event.running, 'finishes', 'finish')}."
        )
    return (
        f":stop_button: {user(event.user)} cancelled run #{event.run_id}: {reason}. {queued}; "
        f"{running} {agree(event.running, 'is', 'are')} being stopped."
    )


def run_resumed(event: RunResumed) -> str:
    return f":arrow_forward: {user(event.user)} resumed run #{event.run_id}."


def after_batch(event: AfterBatchRan) -> str:
    written = plural(event.metrics_written, "trial")
    lines = [f"*After the batch* (CSB's scripts): task metrics written for {written}"]
    if event.metrics_failed:
        lines[0] += f", {event.metrics_failed} failed"
    lines += [f"• {escape(finding)}" for finding in event.findings] or [
        "• validate_task_run: nothing flagged"
    ]
    lines += [f"• :warning: {escape(problem)}" for problem in event.problems]
    return "\n".join(lines)


def not_in_channel(_: NotInChannel) -> str:
    return (
        "I'm not in this channel, so I can't post the approval card here. "
        "Invite me with `/invite @csb` and run the command again."
    )


def request_edited(event: RequestEdited) -> str:
    return f"Edited by {user(event.user)} (revision {event.revision}): {escape(event.change)}"


def still_waiting(event: StillWaiting) -> str:
    if event.anyone:
        hint = "Anyone in the channel may approve it."
    else:
        names = [user(u) for u in event.users] + [f"<!subteam^{g}>" for g in event.usergroups]
        hint = f"Approvers: {', '.join(names)}." if names else "No approver is configured for this category."
    return f"Request #{event.request_id} is still waiting for approval. {hint}"


def promotion_ended(event: PromotionEnded) -> str:
    when = (
        " (settled by the bot process that took over, after a restart or a lost timer lease)"
        if event.after_restart
        else ""
    )
    head = {
        "promoted": f":white_check_mark: Promotion #{event.promotion_id}: "
        f"run #{event.run_id} is official{when}.",
        "undone": f":x: Promotion #{event.promotion_id} of run #{event.run_id} was undone{when}: "
        "the run is back in runs/staging as it was, runs/official is unchanged.",
        "lost": f":x: Promotion #{event.promotion_id} of run #{event.run_id}: the run folder is in neither "
        "runs/staging nor runs/official; nothing was touched, an operator must look.",
        "void": f":warning: Promotion #{event.promotion_id} of run #{event.run_id} is void: what its card "
        "showed no longer holds, so nothing was moved or written. Ask again with "
        f"`/csb promote {event.run_id}` to see the current state.",
    }.get(event.outcome, f"Promotion #{event.promotion_id} ended {escape(event.outcome)}{when}.")
    lines = [head]
    if event.error and event.outcome == "void":
        lines.append(f"Why: {escape(event.error)}")
    elif event.error:
        step = f" at step `{escape(event.step)}`" if event.step else ""
        lines.append(f"Failed{step}: {escape(event.error)}")
    if event.differences:
        lines.append(
            f":warning: The MANIFEST written differs from the diff shown in "
            f"{plural(len(event.differences), 'place')}:"
        )
        lines += [f"      {escape(line)}" for line in event.differences[:10]]
    return "\n".join(lines)


# One view per kind; tests/test_one_place.py checks that every kind of event has one.
EVENT_VIEWS: dict[type[Any], Callable[[Any], str]] = {
    ExecutorBack: executor_back,
    ExecutorAway: executor_away,
    RunPaused: run_paused,
    RunVoided: run_voided,
    RunStopped: run_stopped,
    BudgetDrained: budget_drained,
    RunResumed: run_resumed,
    AfterBatchRan: after_batch,
    NotInChannel: not_in_channel,
    RequestEdited: request_edited,
    StillWaiting: still_waiting,
    PromotionEnded: promotion_ended,
    AccountsHeld: accounts_held,
    AccountsFree: accounts_free,
    LaneStalled: lane_stalled,
    LaneRestarted: lane_restarted,
}


def event_text(event: Event) -> str:
    """The event in the thread's words."""
    return EVENT_VIEWS[type(event)](event)


def stored_blocks(stored: str) -> list[Block]:
    """The blocks of a thread note: its words, and for a stalled lane the Stop and retry button (its value
    the lane id, authorised at click time like Cancel)."""
    text = stored_text(stored)
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=text))]
    event = events.load(stored)
    if isinstance(event, LaneStalled):
        button = ButtonElement(
            text=STOP_AND_RETRY, action_id=ActionId.STOP_RETRY, value=str(event.lane_id), style="danger"
        )
        blocks.append(ActionsBlock(block_id=f"stall:{event.lane_id}:{event.attempt}", elements=[button]))
    return blocks


def stored_text(stored: str) -> str:
    """What a stored row says: an event is worded now; text (milestones, replies the views worded, or
    a row written by a version before events) is shown as it is. An unreadable event raises ValueError."""
    event = events.load(stored)
    return stored if event is None else event_text(event)
