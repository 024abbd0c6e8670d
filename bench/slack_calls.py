"""Slack Web API traffic of one simulated 264-task paired run: calls by method, posts per second per
channel, card edits per interval, and the total against a budget.

The real bot runs in this process with its real timers (APScheduler ticks the engine and the notifier
as in production, on the system clock), served on loopback with `build_web_app(bot, timers=True)`.
Its Web API calls go to the Slack stand-in, which records every call with its arrival time. A
generated CSB-shaped checkout holds one suite file of 264 tiny tasks (11 suites x 24, easy and hard
mixed so the lanes differ), and the example bench's Harbor stand-in runs them: 528 lanes, each a few
short processes, at `--parallel 32`. `SlackDriver` sends a signed `/csb run --parallel 32` and then
clicks Approve; the script waits until the paired report is in the card's thread, the requester's DM
is sent and the outbox has nothing pending.

Goals (from the issue): at most one `chat.update` per card per `card_update_seconds`; at most one
`chat.postMessage` per second per channel; total calls <= 2 x milestones + ceil(D / interval) + the
fixed messages (see `FIXED_CALLS`), D being the time from the Approve click to the last call.

The bot gives each lane attempt its own job folder (`--job-name`, as it does with real Harbor), so
the stand-in runs directly. `--harbor shim` runs each lane through a small shim that gives the stand-in
a private jobs dir and then moves the job folder it wrote, under its name, into the lane's real jobs dir:
the behaviour of earlier versions, kept for comparison.

    .venv/bin/python bench/slack_calls.py [--tasks 264] [--parallel 32] [--timeout 300] [--harbor shim|direct]

Prints a table of calls by method, then the figures, and last `goals_met=<true|false>` (with the
reason of each goal missed). Exits 1 when the run did not finish within the timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestServer
from sqlalchemy import func, select

from bot.playground import APPROVER, REQUESTER, RecordedCall, SlackDriver, SlackStandin, buttons
from bot.server import build_web_app
from bot.settings import Settings
from bot.store.models import Lane, OutboxItem, OutboxState
from bot.wiring import Bot, build_bot

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the engine's drivers for tests and benchmarks
from engine_kit import kill_all  # noqa: E402
from lane_waits import running_count, wait_all  # noqa: E402

STANDIN_HARBOR = ROOT / "configs" / "example-bench" / "bin" / "harbor"
EVAL_MATRIX = ROOT / "configs" / "example-bench" / "configs" / "eval_matrix.json"
TOKEN = "xoxb-bench-token"
SECRET = "bench-signing-secret"
CHANNEL = "C0PLAY"
SUITE_FILE = "benchmarks/suites/bench-264.json"
SUITES = (
    "csb_sdlc_fix",
    "csb_sdlc_debug",
    "csb_sdlc_feature",
    "csb_sdlc_refactor",
    "csb_sdlc_test",
    "csb_sdlc_docs",
    "csb_sdlc_secure",
    "csb_org_onboarding",
    "csb_org_migration",
    "csb_org_compliance",
    "csb_org_crossrepo",
)
CARD_UPDATE_SECONDS = 3.0
POST_INTERVAL_SECONDS = 1.0
UPDATES_PER_MINUTE = 45
POLL_SECONDS = 0.25

# The fixed calls of one run, besides the milestones and the paced card edits. The CSV is uploaded
# when the report's table does not fit in a message, which is always the case at 264 tasks.
FIXED_CALLS = {
    "auth.test (Bolt, on the first request)": 1,
    "chat.postMessage: the approval card": 1,
    "chat.update: the card turned into the approved status card": 1,
    "chat.postMessage: the paired report (thread, broadcast)": 1,
    "files.getUploadURLExternal + files.completeUploadExternal: the report's CSV": 2,
    "files.getUploadURLExternal x 3 + files.completeUploadExternal: the report's two charts and their CSV": 4,
    "conversations.open + chat.postMessage: the requester's DM": 2,
}

# -- the checkout -------------------------------------------------------------------------------------

TASK_TOML = """\
version = "1.0"

[metadata]
name = "{task_id}"
description = "bench/slack_calls.py task: make answer.txt say 1.0"

[task]
id = "{task_id}"
language = "bash"
difficulty = "{difficulty}"
time_limit_sec = 60

[verification]
type = "test"
command = "bash /tests/test.sh"
reward_type = "test_ratio"
"""
# Both scripts run with the task's code (environment/repo/) as the working directory.
SOLVE_SH = """\
#!/usr/bin/env bash
set -euo pipefail
echo 1.0 > answer.txt
"""
TEST_SH = """\
#!/usr/bin/env bash
set -euo pipefail
export REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"
mkdir -p "$(dirname "$REWARD_FILE")"
cat answer.txt > "$REWARD_FILE"
"""

# Gives each lane's Harbor stand-in a private --jobs-dir, then moves the one job folder it wrote into
# the lane's jobs dir under its own name (see the module docstring).
HARBOR_SHIM = """\
#!/bin/sh
stage=$(mktemp -d "@STAGING@/lane.XXXXXXXX") || exit 1
jobs=
take=
for arg do
    shift
    if [ -n "$take" ]; then jobs=$arg; arg=$stage; take=; fi
    [ "$arg" = --jobs-dir ] && take=1
    set -- "$@" "$arg"
done
"@HARBOR@" "$@"
code=$?
if [ -n "$jobs" ]; then
    mkdir -p "$jobs"
    for job in "$stage"/*; do
        [ -d "$job" ] && mv "$job" "$jobs/${job##*/}"
    done
fi
rm -rf "$stage"
exit $code
"""


def task_ids(count: int) -> list[tuple[str, str, str]]:
    """(suite, task_id, difficulty): suites in turn, every third task easy (baseline passes only those)."""
    per_suite = math.ceil(count / len(SUITES))
    out = []
    for index in range(count):
        suite = SUITES[index // per_suite]
        number = index % per_suite + 1
        short = suite.removeprefix("csb_").replace("_", "-")
        difficulty = "easy" if index % 3 == 0 else "hard"
        out.append((suite, f"{short}-bench-{number:03d}", difficulty))
    return out


def make_checkout(root: Path, count: int) -> Path:
    repo = root / "csb"
    # Harbor imports the agent from the checkout (the bot puts it on PYTHONPATH): the bench's stand-in.
    shutil.copytree(ROOT / "configs" / "example-bench" / "agents", repo / "agents")
    tasks = task_ids(count)
    entries = []
    for suite, task_id, difficulty in tasks:
        folder = repo / "benchmarks" / "tasks" / suite / task_id
        (folder / "environment" / "repo").mkdir(parents=True)
        (folder / "solution").mkdir()
        (folder / "tests").mkdir()
        (folder / "task.toml").write_text(TASK_TOML.format(task_id=task_id, difficulty=difficulty))
        (folder / "environment" / "repo" / "answer.txt").write_text("0.0\n")
        for dockerfile in ("Dockerfile", "Dockerfile.sg_only"):  # CSB's harness needs both for a pair
            (folder / "environment" / dockerfile).write_text("FROM python:3.11-slim\n")
        for script, text in (("solution/solve.sh", SOLVE_SH), ("tests/test.sh", TEST_SH)):
            (folder / script).write_text(text)
            (folder / script).chmod(0o755)
        entries.append(
            {
                "task_id": task_id,
                "suite": suite,
                "verifier_modes": ["direct"],
                "language": "bash",
                "difficulty": difficulty,
                "task_dir": f"{suite}/{task_id}",
            }
        )
    suite_counts = Counter(suite for suite, _, _ in tasks)
    suite_file = {
        "suite_id": "bench-264",
        "version": "1.0",
        "created": "2026-01-01",
        "description": f"bench/slack_calls.py: {count} tiny tasks for the Harbor stand-in.",
        "task_count": count,
        "excluded_count": 0,
        "verifier_breakdown": {"direct_only": count, "artifact_only": 0, "dual": 0},
        "suites": dict(sorted(suite_counts.items())),
        "frozen": False,
        "tasks": entries,
    }
    (repo / SUITE_FILE).parent.mkdir(parents=True)
    (repo / SUITE_FILE).write_text(json.dumps(suite_file, indent=2) + "\n")
    (repo / "configs").mkdir()
    shutil.copyfile(EVAL_MATRIX, repo / "configs" / "eval_matrix.json")
    return repo


def make_harbor(root: Path, mode: str) -> Path:
    if mode == "direct":
        return STANDIN_HARBOR
    staging = root / "harbor-staging"
    staging.mkdir()
    shim = root / "harbor-shim"
    shim.write_text(HARBOR_SHIM.replace("@STAGING@", str(staging)).replace("@HARBOR@", str(STANDIN_HARBOR)))
    shim.chmod(0o755)
    return shim


def write_config(root: Path, parallel: int) -> Path:
    path = root / "csb-bot.toml"
    path.write_text(
        f"""\
[engine]
default_parallel = {parallel}
global_slots = {parallel}
account_homes = "{root / "no-accounts" / "account*"}"

[notifier]
card_update_seconds = {CARD_UPDATE_SECONDS:g}
post_interval_seconds = {POST_INTERVAL_SECONDS:g}
updates_per_minute = {UPDATES_PER_MINUTE}
"""
    )
    return path


# -- the run ------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    finished: bool
    clicked_at: float
    card_ts: str
    lane_states: dict[str, int]
    infra_failures: int
    dead_rows: int
    wall: float


async def run(root: Path, args: argparse.Namespace, standin: SlackStandin) -> Outcome:
    repo = make_checkout(root, args.tasks)
    harbor = make_harbor(root, args.harbor)
    slack_server = TestServer(standin.build_app(), host="127.0.0.1")
    await slack_server.start_server()
    bot: Bot | None = None
    bot_server: TestServer | None = None
    started = time.monotonic()
    try:
        slack_url = str(slack_server.make_url("")).rstrip("/")
        standin.base_url = slack_url
        settings = Settings(
            slack_bot_token=TOKEN,
            slack_signing_secret=SECRET,
            slack_app_token=None,
            slack_api_url=f"{slack_url}/api/",
            csb_repo=repo,
            csb_database_url=f"sqlite+aiosqlite:///{root / 'bot.db'}",
            csb_config=write_config(root, args.parallel),
            csb_harbor=str(harbor),
        )  # type: ignore[call-arg]
        environ = {**os.environ, "SOURCEGRAPH_ACCESS_TOKEN": "bench-placeholder"}
        environ.pop("HARBOR_STANDIN_SCRIPT", None)
        environ["HARBOR_STANDIN_DELAY"] = str(args.delay)
        bot = build_bot(settings, environ=environ)
        bot_server = TestServer(build_web_app(bot, timers=True), host="127.0.0.1")
        await bot_server.start_server()
        bot_url = str(bot_server.make_url("/slack/events"))
        async with SlackDriver(bot_url, SECRET, standin, slack_url) as driver:
            answer = await driver.slash_command(REQUESTER, f"run --parallel {args.parallel}", CHANNEL)
            if answer.status != 200:
                raise RuntimeError(f"/csb run answered {answer.status}: {answer.body_text[:300]}")
            card = await wait_for_card(standin, deadline=time.monotonic() + 30)
            clicked_at = time.time()
            answer = await driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
            if answer.status != 200:
                raise RuntimeError(f"Approve answered {answer.status}: {answer.body_text[:300]}")
            finished = await wait_until_done(bot, standin, card["ts"], time.monotonic() + args.timeout)
        return Outcome(
            finished=finished,
            clicked_at=clicked_at,
            card_ts=card["ts"],
            lane_states=await lane_states(bot),
            infra_failures=await infra_failures(bot),
            dead_rows=await count_outbox(bot, OutboxState.DEAD),
            wall=time.monotonic() - started,
        )
    finally:
        if bot is not None:
            if running_count(bot.engine.executor):
                await kill_all(bot.engine, bot.store)
            await wait_all(bot.engine.executor)
            await bot.engine.shutdown()
        if bot_server is not None:
            await bot_server.close()
        await slack_server.close()


async def wait_for_card(standin: SlackStandin, deadline: float) -> dict[str, Any]:
    while time.monotonic() < deadline:
        for message in standin.messages(CHANNEL):
            if any(b.text == "Approve" for b in buttons(message.get("blocks", []))):
                return message
        await asyncio.sleep(POLL_SECONDS)
    ephemerals = [e.get("text", "") for e in standin.ephemerals()]
    raise RuntimeError(f"no approval card within 30 s; ephemeral replies: {ephemerals}")


async def wait_until_done(bot: Bot, standin: SlackStandin, card_ts: str, deadline: float) -> bool:
    """The report is in the thread, the DM went out, no lane runs and the outbox has nothing pending."""
    settled = 0
    while time.monotonic() < deadline:
        posts = [c for c in standin.calls if c.ok and c.method == "chat.postMessage"]
        report = any(_is_report(c, card_ts) for c in posts)
        dm = any(str(c.args.get("channel", "")).startswith("D") for c in posts)
        idle = running_count(bot.engine.executor) == 0
        pending = await count_outbox(bot, OutboxState.PENDING) if report and dm and idle else None
        settled = settled + 1 if pending == 0 else 0
        if settled >= 2:  # twice in a row, half a second apart: nothing was about to be queued
            return True
        await asyncio.sleep(POLL_SECONDS)
    return False


async def count_outbox(bot: Bot, state: OutboxState) -> int:
    async with bot.store.read() as session:
        query = select(func.count()).select_from(OutboxItem).where(OutboxItem.state == state)
        return int((await session.execute(query)).scalar_one())


async def lane_states(bot: Bot) -> dict[str, int]:
    async with bot.store.read() as session:
        rows = await session.execute(select(Lane.state, func.count()).group_by(Lane.state))
        return {str(state): int(count) for state, count in rows.all()}


async def infra_failures(bot: Bot) -> int:
    async with bot.store.read() as session:
        return int(
            (await session.execute(select(func.coalesce(func.sum(Lane.infra_failures), 0)))).scalar_one()
        )


# -- the figures --------------------------------------------------------------------------------------


def _truthy(value: Any) -> bool:
    return value in (True, "true", "True", "1", 1)


def _is_report(call: RecordedCall, card_ts: str) -> bool:
    return call.args.get("thread_ts") == card_ts and _truthy(call.args.get("reply_broadcast"))


def peak_in_window(times: Iterable[float], window: float) -> int:
    """Most events in any half-open window [t, t + window) starting at an event."""
    ordered = sorted(times)
    best, low = 0, 0
    for high, t in enumerate(ordered):
        while ordered[low] <= t - window:
            low += 1
        best = max(best, high - low + 1)
    return best


def min_gap(times: Sequence[float]) -> float | None:
    ordered = sorted(times)
    return min((b - a for a, b in itertools.pairwise(ordered)), default=None)


def report(
    calls: list[RecordedCall], outcome: Outcome, args: argparse.Namespace, skipped: Mapping[str, int]
) -> bool:
    ok = [c for c in calls if c.ok]
    failed = Counter(c.method for c in calls if not c.ok)
    by_method = Counter(c.method for c in ok)
    width = max([len(m) for m in by_method] + [len("method")])
    print(f"{'method':<{width}}  {'ok':>5}  {'failed':>6}")
    for method, count in sorted(by_method.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{method:<{width}}  {count:>5}  {failed.get(method, 0):>6}")
    for method in sorted(set(failed) - set(by_method)):
        print(f"{method:<{width}}  {0:>5}  {failed[method]:>6}")

    posts: dict[str, list[float]] = defaultdict(list)
    for c in ok:
        if c.method == "chat.postMessage":
            posts[str(c.args.get("channel"))].append(c.at)
    peak_posts = {channel: peak_in_window(times, 1.0) for channel, times in posts.items()}
    in_channel: dict[str, list[float]] = defaultdict(list)
    for c in ok:
        if "channel" in c.args:
            in_channel[str(c.args["channel"])].append(c.at)
    peak_calls = {channel: peak_in_window(times, 1.0) for channel, times in in_channel.items()}
    peak_post = max(peak_posts.values(), default=0)

    updates: dict[tuple[str, str], list[float]] = defaultdict(list)
    for c in ok:
        if c.method == "chat.update":
            updates[(str(c.args.get("channel")), str(c.args.get("ts")))].append(c.at)
    card_updates = updates.get((CHANNEL, outcome.card_ts), [])
    peak_updates = max((peak_in_window(t, CARD_UPDATE_SECONDS) for t in updates.values()), default=0)
    gap = min_gap(card_updates)
    post_gaps = [g for times in posts.values() if (g := min_gap(times)) is not None]

    thread = [c for c in ok if c.method == "chat.postMessage" and c.args.get("thread_ts") == outcome.card_ts]
    milestones = [c for c in thread if not _is_report(c, outcome.card_ts)]
    last_at = max((c.at for c in ok), default=outcome.clicked_at)
    duration = last_at - outcome.clicked_at
    paced_updates = math.ceil(duration / CARD_UPDATE_SECONDS)
    fixed = sum(FIXED_CALLS.values())
    budget = 2 * len(milestones) + paced_updates + fixed
    total = len(ok)

    print()
    print(f"tasks={args.tasks} lanes={2 * args.tasks} parallel={args.parallel} harbor={args.harbor}")
    print(f"finished={str(outcome.finished).lower()} wall_s={outcome.wall:.1f}")
    print(f"lanes_by_state={json.dumps(outcome.lane_states, sort_keys=True)}")
    print(f"infra_failures={outcome.infra_failures}")
    print(f"run_duration_s={duration:.1f} (Approve click to the last Web API call)")
    print(f"milestones={len(milestones)} (thread posts other than the report)")
    print(f"card_updates={len(card_updates)} min_update_gap_s={_fmt(gap)}")
    print(f"min_post_gap_s_per_channel={_fmt(min(post_gaps, default=None))}")
    print(f"peak_posts_per_sec_by_channel={json.dumps(peak_posts, sort_keys=True)}")
    print(f"peak_calls_per_sec_by_channel={json.dumps(peak_calls, sort_keys=True)} (every method)")
    print(f"outbox_dead={outcome.dead_rows} failed_calls={sum(failed.values())}")
    print(f"skipped_timer_ticks={json.dumps(dict(skipped), sort_keys=True)} (the previous tick still ran)")
    print(
        f"budget = 2 x {len(milestones)} milestones + ceil({duration:.1f} / {CARD_UPDATE_SECONDS:g}) = "
        f"{paced_updates} paced card edits + {fixed} fixed ("
        + "; ".join(f"{n} {what}" for what, n in FIXED_CALLS.items())
        + ")"
    )
    print(f"peak_posts_per_sec_per_channel={peak_post}")
    print(f"max_updates_per_card_interval={peak_updates}")
    print(f"total_calls={total}")
    print(f"budget={budget}")

    missed = []
    if not outcome.finished:
        missed.append(f"the run did not finish within {args.timeout:g} s")
    if peak_updates > 1:
        missed.append(
            f"{peak_updates} chat.update of one card within {CARD_UPDATE_SECONDS:g} s (min gap {_fmt(gap)} s)"
        )
    if peak_post > 1:
        missed.append(f"{peak_post} chat.postMessage in one channel within 1 s")
    if total > budget:
        missed.append(f"{total} calls > budget {budget}")
    reason = f" ({'; '.join(missed)})" if missed else ""
    print(f"goals_met={str(not missed).lower()}{reason}")
    return outcome.finished


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


SKIPPED_TICK = re.compile(r'Execution of job "([^ "]+).*skipped: maximum number of running instances')


class SkippedTicks(logging.Handler):
    """Counts APScheduler's "skipped: maximum number of running instances" per job, instead of printing
    each: a tick that is skipped because the previous one still runs says the event loop is busy."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        skipped = SKIPPED_TICK.match(message)
        if skipped:
            self.counts[skipped.group(1)] += 1
        else:
            sys.stderr.write(self.format(record) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=264, help="tasks in the suite file (2 lanes each)")
    parser.add_argument("--parallel", type=int, default=32, help="--parallel of the run and the global slots")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the report")
    parser.add_argument("--delay", type=float, default=0, help="HARBOR_STANDIN_DELAY of every lane, seconds")
    parser.add_argument("--harbor", choices=("shim", "direct"), default="direct", help="see the docstring")
    args = parser.parse_args(argv)
    skipped = SkippedTicks()
    scheduler_log = logging.getLogger("apscheduler")
    scheduler_log.addHandler(skipped)
    scheduler_log.propagate = False
    standin = SlackStandin(bot_token=TOKEN)
    root = Path(tempfile.mkdtemp(prefix="csb-slack-calls-"))
    try:
        outcome = asyncio.run(run(root, args, standin))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if report(list(standin.calls), outcome, args, skipped.counts) else 1


if __name__ == "__main__":
    sys.exit(main())
