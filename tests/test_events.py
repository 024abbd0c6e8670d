"""Events, not words: what the engine and the services queue is a typed record that round-trips through
the outbox's JSON, and each kind has one view that words it exactly as the thread showed it before."""

from __future__ import annotations

import pytest

from bot.domain import events
from bot.domain.events import (
    EVENT_TYPES,
    AccountHeld,
    AccountsFree,
    AccountsHeld,
    AfterBatchRan,
    BudgetDrained,
    ExecutorAway,
    ExecutorBack,
    LaneRestarted,
    LaneStalled,
    NotInChannel,
    PauseCause,
    PromotionEnded,
    RequestEdited,
    RunPaused,
    RunResumed,
    RunStopped,
    RunVoided,
    StillWaiting,
)
from bot.slack.views.events import EVENT_VIEWS, STOP_AND_RETRY, event_text, stored_blocks, stored_text

PAUSED = RunPaused(
    run_id=3,
    failures=4,
    attempts=5,
    threshold=0.5,
    causes=(
        PauseCause(id="api_rate_limit", lanes=3, label="API rate limit", advice="Reduce parallelism."),
        PauseCause(id="crash", lanes=1),
    ),
    last="Docker daemon is not running",
)
SAMPLES = [
    ExecutorBack(),
    ExecutorAway(why="head <!channel> & co"),
    PAUSED,
    RunVoided(run_id=2, note="the approval is void", drift="`a.json` changed", dropped=1),
    RunStopped(run_id=4, user="U1", reason="wrong <@U2>", drain=True, dropped=1, running=1),
    RunStopped(run_id=4, user="U1", reason="wrong model", drain=False, dropped=2, running=3),
    RunResumed(run_id=5, user="U1"),
    AfterBatchRan(metrics_written=6, metrics_failed=1, findings=("<https://x|y>",), problems=("boom",)),
    AfterBatchRan(metrics_written=1, metrics_failed=0),
    NotInChannel(request_id=9),
    RequestEdited(user="U1", revision=2, change="model: a → <b>"),
    StillWaiting(request_id=7, anyone=False, users=("U1",), usergroups=("S1",)),
    StillWaiting(request_id=7, anyone=True),
    StillWaiting(request_id=7, anyone=False),
    PromotionEnded(promotion_id=2, run_id=7, outcome="promoted", differences=("fix/mcp t1: shown passed",)),
    PromotionEnded(
        promotion_id=2, run_id=7, outcome="undone", step="move", error="<@U1> *x*", after_restart=True
    ),
    BudgetDrained(
        run_id=8,
        scope="category",
        name="staging",
        month="2026-03",
        spent_usd=301.5,
        block_usd=300.0,
        budget_usd=300.0,
        dropped=4,
        running=1,
    ),
    BudgetDrained(
        run_id=8,
        scope="model",
        name="anthropic/<opus>",
        month="2026-03",
        spent_usd=1250.0,
        block_usd=1000.0,
        budget_usd=2000.0,
        dropped=0,
        running=2,
    ),
    AccountsHeld(
        accounts=(
            AccountHeld(name="account1", why="drained", detail="U9"),
            AccountHeld(name="account2", why="utilisation", detail="97.0% 5-hour, 40.0% 7-day"),
            AccountHeld(name="account3", why="expired"),
        )
    ),
    AccountsFree(),
    LaneStalled(
        run_id=3, lane_id=12, task_id="t1", role="mcp", attempt=2, account="account2", quiet_sec=1860
    ),
    LaneRestarted(run_id=3, user="U9", lanes=("t1/mcp", "t2/baseline"), account="account2"),
    LaneRestarted(run_id=3, user="U9", lanes=("t1/mcp",)),
]


def test_a_run_over_budget_is_said_to_drain_and_why() -> None:
    category, model = (event_text(event) for event in SAMPLES if isinstance(event, events.BudgetDrained))
    assert category == (
        ":double_vertical_bar: *Over budget*: `staging` runs have spent $301.50 in 2026-03, past the block "
        "line of $300.00 (budget $300.00), so the bot is draining run #8. No new pairs start (4 queued lanes "
        "dropped); 1 running lane finishes."
    )
    assert model.startswith(
        ":double_vertical_bar: *Over budget*: runs of `anthropic/&lt;opus&gt;` have spent $1,250.00 in "
        "2026-03, past the block line of $1,000.00 (budget $2,000.00)"
    )


def test_every_kind_of_event_has_one_view_and_a_sample_here() -> None:
    assert set(EVENT_VIEWS) == set(EVENT_TYPES)
    assert {type(event) for event in SAMPLES} == set(EVENT_TYPES)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: event.kind)
def test_an_event_round_trips_through_the_outbox_json(event: events.Event) -> None:
    stored = events.dump(event)
    assert stored.startswith('{"kind":') and events.load(stored) == event
    assert stored_text(stored) == event_text(event)


def test_text_written_by_an_older_version_is_shown_as_it_is() -> None:
    older = ":pause_button: Run #1 is paused: 4 of 5 lane attempts failed on infrastructure."
    assert events.load(older) is None and stored_text(older) == older
    assert stored_text('{"not": "an event"}') == '{"not": "an event"}'


def test_an_event_that_cannot_be_read_raises_rather_than_posting_json() -> None:
    for broken in ('{"kind":"run_resumed","run_id":"one"}', '{"kind":"no_such_kind"}', '{"kind":'):
        with pytest.raises(ValueError, match="outbox event unreadable"):
            events.load(broken)


def test_events_are_frozen() -> None:
    with pytest.raises(ValueError):
        PAUSED.run_id = 4  # type: ignore[misc]


def test_the_views_word_events_as_the_thread_showed_them() -> None:
    words = [event_text(event) for event in SAMPLES]
    assert words[0] == ":arrow_forward: Lanes start again: the executor answers."
    assert words[1] == (
        ":hourglass: Lanes of this run wait to start: head &lt;!channel&gt; &amp; co. They start once it "
        "answers; running lanes go on."
    )
    assert words[2] == (
        ":pause_button: Run #3 is paused: 4 of 5 lane attempts failed on infrastructure: api_rate_limit ×3, "
        "crash ×1, last: Docker daemon is not running (threshold 50%). Running lanes finish; nothing new "
        "starts.\n• `api_rate_limit` (API rate limit): Reduce parallelism.\n"
        "Fix the cause, then `/csb resume 3` (or cancel it)."
    )
    assert words[3] == (
        ":no_entry: Run #2 did not start: the approval is void (`a.json` changed). 1 lane was dropped before "
        "launch; request it again to run the current tasks."
    )
    assert words[4] == (
        ":double_vertical_bar: <@U1> is draining run #4: wrong &lt;@U2&gt;. No new pairs start "
        "(1 queued lane dropped); 1 running lane finishes."
    )
    assert words[5] == (
        ":stop_button: <@U1> cancelled run #4: wrong model. 2 queued lanes dropped; 3 running lanes are "
        "being stopped."
    )
    assert words[6] == ":arrow_forward: <@U1> resumed run #5."
    assert words[7] == (
        "*After the batch* (CSB's scripts): task metrics written for 6 trials, 1 failed\n"
        "• &lt;https://x|y&gt;\n• :warning: boom"
    )
    assert words[8] == (
        "*After the batch* (CSB's scripts): task metrics written for 1 trial\n"
        "• validate_task_run: nothing flagged"
    )
    assert "Invite me with `/invite @csb`" in words[9]
    assert words[10] == "Edited by <@U1> (revision 2): model: a → &lt;b&gt;"
    assert words[11] == "Request #7 is still waiting for approval. Approvers: <@U1>, <!subteam^S1>."
    assert words[12] == "Request #7 is still waiting for approval. Anyone in the channel may approve it."
    assert (
        words[13] == "Request #7 is still waiting for approval. No approver is configured for this category."
    )
    assert PAUSED.reason() == (
        "4 of 5 lane attempts failed on infrastructure: api_rate_limit ×3, crash ×1, "
        "last: Docker daemon is not running"
    )


def test_the_account_and_stall_events_say_why_and_the_stall_note_carries_its_button() -> None:
    held, free, stalled, drained, retried = (event_text(event) for event in SAMPLES[-5:])
    assert held == (
        ":hourglass: Lanes of this run wait to start: no account may take a new lane now.\n"
        "• `account1`: drained by <@U9>\n"
        "• `account2`: at or above the utilisation limit (97.0% 5-hour, 40.0% 7-day)\n"
        "• `account3`: its token has expired (or has under 5 minutes left)\n"
        "They start as soon as one may (`/csb accounts` shows each account)."
    )
    assert free == ":arrow_forward: Lanes start again: an account may take them."
    assert stalled.startswith(
        ":warning: Lane `t1/mcp` (attempt 2) on `account2` has not changed its log or trial folder for "
        "31 min."
    )
    assert "off the drained account `account2`" in drained and "2 lanes (`t1/mcp`, `t2/baseline`)" in drained
    assert "stopped 1 lane (`t1/mcp`) as stalled" in retried
    section, actions = stored_blocks(events.dump(SAMPLES[-3]))
    assert section.to_dict()["text"]["text"] == stalled
    button = actions.to_dict()["elements"][0]
    assert button["text"]["text"] == STOP_AND_RETRY and button["value"] == "12"
    assert len(stored_blocks(events.dump(AccountsFree()))) == 1  # other notes carry no button
