"""Thread milestones from a run's card: each once, by a stable key."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.slack.milestones import reached
from bot.slack.views.run_card import RunCardView

STARTED = datetime(2026, 1, 1, tzinfo=UTC)


def card(done: int, total: int = 8, state: str = "running") -> RunCardView:
    return RunCardView(
        run_id=3,
        state=state,
        pairs_done=done,
        pairs_total=total,
        lanes_running=2,
        lanes_queued=0,
        started_at=STARTED,
    )


def keys(run: RunCardView, infra_failures: int = 0) -> list[str]:
    return [milestone.key for milestone in reached(run, infra_failures)]


def test_quarters_while_under_way_and_never_at_the_finish() -> None:
    assert keys(card(1)) == ["milestone:3:started"]
    assert keys(card(6)) == ["milestone:3:started", "milestone:3:25", "milestone:3:50", "milestone:3:75"]
    assert keys(card(8, state="finished")) == ["milestone:3:started"]


def test_a_storm_note_per_five_infrastructure_failures_counted_over_the_whole_run() -> None:
    assert keys(card(1), infra_failures=4) == ["milestone:3:started"]
    (storm,) = [m for m in reached(card(1), 12) if ":infra:" in m.key]
    assert storm.key == "milestone:3:infra:2" and "12 infrastructure failures" in storm.text
