"""The App Home tab: what waits for me, my runs, the queue, and the latest official results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.domain.promotion import OfficialLine
from bot.domain.slack_limits import MAX_VIEW_BLOCKS
from bot.domain.words import plural
from bot.slack.ids import ActionId
from bot.slack.inbound.payloads import decision_value
from bot.slack.views.format import SECTION_LIMIT, clip, code, escape, user, when
from bot.slack.views.promotion import manifest_blocks
from bot.slack.views.run_card import progress_bar
from bot.store.records import OrphanProcess


@dataclass(frozen=True)
class HomeRequest:
    request_id: int
    requester: str
    summary: str  # "`model` on `suite`: N tasks, category", mrkdwn with every value escaped
    can_approve: bool
    revision: int = 1


@dataclass(frozen=True)
class HomeRun:
    run_id: int
    state: str
    suite_label: str
    pairs_done: int
    pairs_total: int


@dataclass(frozen=True)
class HomeResult:
    run_id: int
    suite_label: str
    model: str
    baseline: str  # "k/n passed"
    mcp: str


@dataclass(frozen=True)
class HomeView:
    user_id: str
    waiting: Sequence[HomeRequest]
    my_runs: Sequence[HomeRun]
    runs_queued: int
    runs_running: int
    lanes_running: int
    slots: int | None
    official: Sequence[HomeResult]
    set_aside: int | None = None  # outbox rows given up; shown to admins only
    # runs/official/MANIFEST.json as `/csb official` reads it: None when there is none; its problem, if any
    manifest: Sequence[OfficialLine] | None = None
    manifest_problem: str | None = None
    orphans: Sequence[OrphanProcess] | None = None  # marked processes no running lane owns; admins only


def home_tab(home: HomeView) -> View:
    blocks: list[Block] = [HeaderBlock(text="CodeScaleBench runs")]
    blocks += _waiting(home.waiting)
    blocks += [DividerBlock(), *_my_runs(home.my_runs)]
    blocks += [DividerBlock(), _queue(home)]
    blocks += [DividerBlock(), *_official(home.official)]
    blocks += manifest_blocks(home.manifest, home.manifest_problem)
    blocks += [] if home.set_aside is None else [_section(f"*Messages set aside*: {home.set_aside}")]
    blocks += [] if not home.orphans else [_section(orphans_text(home.orphans))]
    return View(type="home", blocks=blocks[:MAX_VIEW_BLOCKS])


ORPHANS_SHOWN = 10


def orphans_text(orphans: Sequence[OrphanProcess]) -> str:
    """Harbor processes carrying the bot's lane marker that belong to no running lane: an operator stops
    them (they may hold a sandbox, an account's session, a slot on the host)."""
    lines = [
        f"*Orphaned lane processes* ({len(orphans)}): they carry the bot's lane marker but no running lane "
        "owns them; stop each by hand (`kill -INT -<pid>`, its process group) once you have looked."
    ]
    lines += [
        f"• pid {orphan.pid} on `{escape(orphan.host)}`"
        + (f", job `{escape(orphan.job)}`" if orphan.job else "")
        + f", marker `{escape(orphan.marker)}`, seen {when(orphan.seen_at)}"
        for orphan in orphans[:ORPHANS_SHOWN]
    ]
    if len(orphans) > ORPHANS_SHOWN:
        lines.append(f"… and {len(orphans) - ORPHANS_SHOWN} more")
    return "\n".join(lines)


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_LIMIT)))


def _waiting(waiting: Sequence[HomeRequest]) -> list[Block]:
    mine = [r for r in waiting if r.can_approve]
    if not mine:
        return [_section("*Waiting for your approval*\nNothing right now.")]
    blocks: list[Block] = [_section(f"*Waiting for your approval* ({len(mine)})")]
    for request in mine[:15]:
        blocks.append(_section(f"*#{request.request_id}* by {user(request.requester)}: {request.summary}"))
        blocks.append(
            ActionsBlock(
                block_id=f"home:{request.request_id}",
                elements=[
                    ButtonElement(
                        text="Approve",
                        action_id=ActionId.APPROVE,
                        value=decision_value(request.request_id, request.revision),
                        style="primary",
                    ),
                    ButtonElement(
                        text="Reject",
                        action_id=ActionId.REJECT,
                        value=decision_value(request.request_id, request.revision),
                        style="danger",
                    ),
                ],
            )
        )
    return blocks


def _my_runs(my_runs: Sequence[HomeRun]) -> list[Block]:
    if not my_runs:
        return [_section("*Your runs*\nNone yet. `/csb run` in a channel starts one.")]
    lines = [
        f"• *#{run.run_id}* {code(run.suite_label, 100)} {run.state}: "
        f"`{progress_bar(run.pairs_done, run.pairs_total, 10)}` "
        f"{run.pairs_done}/{plural(run.pairs_total, 'pair')}"
        for run in my_runs
    ]
    return [_section("*Your runs*\n" + "\n".join(lines))]


def _queue(home: HomeView) -> Block:
    slots = (
        f"{home.lanes_running}/{home.slots} slots busy"
        if home.slots
        else f"{plural(home.lanes_running, 'lane')} running"
    )
    return ContextBlock(
        elements=[
            MarkdownTextObject(
                text=f"*Queue*: {home.runs_queued} queued · {home.runs_running} running · {slots}"
            )
        ]
    )


def _official(results: Sequence[HomeResult]) -> list[Block]:
    if not results:
        return [_section("*Latest official results*\nNo official run has finished yet.")]
    lines = [
        f"• *#{r.run_id}* {code(r.suite_label, 100)} {code(r.model, 100)}: "
        f"baseline {r.baseline} · MCP {r.mcp}"
        for r in results
    ]
    return [_section("*Latest official results*\n" + "\n".join(lines))]
