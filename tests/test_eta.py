"""The ETA rule, written once: which figure is shown (queued: until it starts; else: until it ends) and how
it reads on the run card and in `/csb status` alike."""

from __future__ import annotations

from bot.domain.states import RUN_STATES_WITH_ETA, RunState
from bot.services.queries import RunProgress
from bot.slack.views.replies import status_text
from bot.slack.views.run_card import eta_text
from bot.store.queue import QueueFigures


def test_a_queued_run_shows_when_it_starts_and_a_started_run_when_it_ends() -> None:
    assert QueueFigures(position=2, start_eta_sec=60.0, finish_eta_sec=600.0).eta_sec == 60.0
    assert QueueFigures(position=None, start_eta_sec=0.0, finish_eta_sec=600.0).eta_sec == 600.0
    assert QueueFigures(position=None, start_eta_sec=None, finish_eta_sec=None).eta_sec is None


def test_eta_words_by_state() -> None:
    assert eta_text(RunState.QUEUED, 240.0) == "starts in ~4 min 00 s"
    assert eta_text(RunState.QUEUED, None) == "start time unknown"
    assert eta_text(RunState.RUNNING, 45.0) == "ETA ~45 s"
    assert eta_text(RunState.DRAINING, None) == "ETA unknown"
    for state in set(RunState) - set(RUN_STATES_WITH_ETA):  # paused, stopping or ended: no next lanes
        assert eta_text(state, 45.0) == "", state


def test_status_lines_use_the_same_words() -> None:
    queued = RunProgress(1, RunState.QUEUED, "r1", 4, 0, 0, queue_position=1, eta_seconds=240.0)
    paused = RunProgress(2, RunState.PAUSED, "r2", 4, 1, 0, eta_seconds=240.0)
    text = status_text([queued, paused])
    assert "0 running, starts in ~4 min 00 s (`r1`)" in text
    assert "0 running (`r2`)" in text
