"""Which thread milestones a run has reached: started, past 25/50/75 % (naming the real share),
storms of infrastructure failures (saying "retried" only when a retry is scheduled).

A pause is announced by the engine itself, once.

Each milestone has a stable key, so the notifier posts it once however often the card is redrawn, and
is dated when it happened, not when a redraw noticed it: a redraw that read the run just before its last
lane ended queues the note after the run closed, and dated then it would follow the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.domain import outbox_keys
from bot.domain.states import RunState
from bot.domain.words import plural
from bot.slack.views.run_card import RunCardView

QUARTERS = (25, 50, 75)
RETRY_STORM_STEP = 5  # a thread note per this many infrastructure failures


@dataclass(frozen=True)
class Milestone:
    key: str
    text: str
    at: datetime | None = None  # when it happened; None: when it was seen


def reached(run: RunCardView, infra_failures: int) -> list[Milestone]:
    found: list[Milestone] = []
    if run.started_at is not None:
        found.append(
            Milestone(
                outbox_keys.milestone(run.run_id, outbox_keys.STARTED),
                f":arrow_forward: Run #{run.run_id} started.",
                run.started_at,
            )
        )
    # Only while the run is under way: a quarter first seen at the finish is news no more. Only the
    # highest quarter passed: two passed at once get one note, not two saying the same share.
    under_way = run.pairs_done < run.pairs_total and run.state != RunState.FINISHED
    passed = [q for q in QUARTERS if under_way and run.pairs_done * 100 >= q * run.pairs_total]
    if passed:
        share = run.pairs_done * 100 // run.pairs_total  # the real share: 1 of 3 is 33 %, not 25 %
        found.append(
            Milestone(
                outbox_keys.milestone(run.run_id, str(passed[-1])),
                f":bar_chart: Run #{run.run_id} is {share} % done "
                f"({run.pairs_done}/{plural(run.pairs_total, 'pair')}).",
                run.progress_at,
            )
        )
    storms = infra_failures // RETRY_STORM_STEP
    if storms:
        found.append(
            Milestone(
                outbox_keys.milestone(run.run_id, f"infra:{storms}"),
                f":warning: Run #{run.run_id} has had {infra_failures} infrastructure failures; "
                + _retry_words(run.lanes_retrying),
            )
        )
    return found


def _retry_words(retrying: int) -> str:
    """Says "retried" only when a retry is scheduled: with `retry_limit = 0`, or the limit reached,
    a failed lane ends as errored."""
    if retrying:
        verb = "is" if retrying == 1 else "are"
        return f"{plural(retrying, 'lane')} {verb} queued to be retried with backoff."
    return "none is waiting for a retry: a lane past its retry limit ends as errored."
