"""Thread milestones from a run's card: each once, by a stable key, saying what is true."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.slack.outbound.milestones import reached
from bot.slack.views.run_card import RunCardView

STARTED = datetime(2026, 1, 1, tzinfo=UTC)


def card(done: int, total: int = 8, state: str = "running", retrying: int = 0) -> RunCardView:
    return RunCardView(
        run_id=3,
        state=state,
        pairs_done=done,
        pairs_total=total,
        lanes_running=2,
        lanes_queued=0,
        lanes_retrying=retrying,
        started_at=STARTED,
    )


def keys(run: RunCardView, infra_failures: int = 0) -> list[str]:
    return [milestone.key for milestone in reached(run, infra_failures)]


def test_the_highest_quarter_passed_while_under_way_and_never_at_the_finish() -> None:
    assert keys(card(1)) == ["milestone:3:started"]
    assert keys(card(2)) == ["milestone:3:started", "milestone:3:25"]
    assert keys(card(6)) == ["milestone:3:started", "milestone:3:75"]
    assert keys(card(8, state="finished")) == ["milestone:3:started"]


def test_a_milestone_names_the_real_share() -> None:
    (_, third) = reached(card(1, total=3), 0)
    assert third.key == "milestone:3:25" and "33 % done (1/3 pairs)" in third.text
    (_, half) = reached(card(1, total=2), 0)
    assert "50 % done (1/2 pairs)" in half.text


def test_a_storm_note_per_five_infrastructure_failures_counted_over_the_whole_run() -> None:
    assert keys(card(1), infra_failures=4) == ["milestone:3:started"]
    (storm,) = [m for m in reached(card(1, retrying=2), 12) if ":infra:" in m.key]
    assert storm.key == "milestone:3:infra:2" and "12 infrastructure failures" in storm.text
    assert "2 lanes are queued to be retried with backoff" in storm.text


def test_retries_are_promised_only_when_one_is_scheduled() -> None:
    """With `retry_limit = 0` (or the limit reached) nothing is queued again: no "retried with backoff"."""
    (storm,) = [m for m in reached(card(1, retrying=0), 5) if ":infra:" in m.key]
    assert "retried" not in storm.text and "ends as errored" in storm.text
