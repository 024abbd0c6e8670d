"""End to end on real Harbor: the bot, driven as Slack drives it, runs the example bench on the pinned Harbor
(`make harbor`) in the bench's host-root environment, with the bench's scripted agent as a Harbor agent.

Harbor runs the verifier and writes every result file here; nothing of Harbor is stood in for. The tests run
on SQLite only (the store's PostgreSQL behaviour is covered elsewhere) and with small parallelism: each
`harbor run` costs a few seconds of CPU, most of it Harbor's own imports.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from bot_process import request_and_approve, world
from harness import CHANNEL, Harness, copy_bench, running_bot
from idle import run_until_idle
from lane_waits import running_count, wait_any
from real_harbor import HOST_ROOT_ENV, TASKS, harbor_or_skip, select_environment, write_suite
from test_cli import bot_env, run
from test_e2e_run import card_text
from test_run_control import approved_run, lane_states, modal_values, run_state, script, thread_texts
from waiting import until

from bot.csb.results import trial_in_job
from bot.domain.outcome import LaneStatus
from bot.playground import REQUESTER
from bot.store import runs
from bot.store.models import Lane, RunState

pytestmark = pytest.mark.slow

SLUG, MERGE = "slugify-punctuation-fix-001", "config-merge-nested-fix-001"


@pytest.fixture
def harbor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    found = harbor_or_skip()
    select_environment(monkeypatch)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # where each trial's root is mounted: empty again after
    return found


def roots_left(tmp_path: Path) -> list[Path]:
    """Mount points of trial roots still on the host: none once every trial is over."""
    return sorted((tmp_path / "scratch").glob("harbor-host-root-*"))


def lane_cost(repo: Path, role: str) -> float:
    """A lane role's cost as CSB's cost_report.py takes it when a trial has no task_metrics.json (jobs
    folder `baseline-…`, else MCP): result.json's `n_input_tokens` × $15 and `n_output_tokens` × $75 per
    million (Opus 4.5's prices, whatever the model), rounded to 4 places per task; Harbor's own
    `cost_usd` is not what CSB reports."""
    total = 0.0
    for job in job_folders(repo):
        if job.parent.name.startswith("baseline") == (role == "baseline"):
            trial = trial_in_job(job)
            assert trial is not None
            agent = json.loads(trial.read_text())["agent_result"]
            total += round((agent["n_input_tokens"] * 15 + agent["n_output_tokens"] * 75) / 1_000_000, 4)
    return total


def exception_types(repo: Path) -> list[str | None]:
    """The `exception_type` of each trial result Harbor wrote (None for a trial without an exception)."""
    infos = [result.get("exception_info") for result in trial_results(repo)]
    return [str(info["exception_type"]) if isinstance(info, dict) else None for info in infos]


async def lanes_of(h: Harness, run_id: int = 1) -> list[Lane]:
    async with h.bot.store.read() as session:
        return await runs.run_lanes(session, run_id)


def agents_started(repo: Path, count: int) -> bool:
    """`count` trials are past agent setup (the lane check wrote its record), so Harbor is in the trial."""
    return len(list((repo / "runs").glob("*/*/*/*/*/agent/lane-env.json"))) >= count


def job_folders(repo: Path) -> list[Path]:
    """Harbor's job folders under the checkout's runs/: `<category>/<run>/<lane config>/<job>`."""
    return sorted(job for job in (repo / "runs").glob("*/*/*/*") if job.is_dir())


def trial_results(repo: Path) -> list[dict[str, object]]:
    """Every trial result.json Harbor wrote under the checkout's runs/."""
    found = [trial_in_job(job) for job in job_folders(repo)]
    return [json.loads(path.read_text()) for path in found if path is not None]


async def test_a_burst_of_paired_lanes_on_real_harbor_reports_harbors_verdicts(
    tmp_path: Path, harbor: Path
) -> None:
    """Four lanes start in one tick, two to a jobs folder within the same second: without the bot's job
    names Harbor would give each pair one timestamped job folder and fail one of them (FileExistsError)."""
    repo = copy_bench(tmp_path)
    suite_file = write_suite(repo)
    async with running_bot(tmp_path, repo=repo, csb_harbor=str(harbor)) as h:
        card = await approved_run(h, f"run --suite-file {suite_file} --parallel 4")
        assert running_count(h.bot.engine.executor) == 4
        await h.run_lanes()
        report = card_text(h.thread(card)[-1])
        lines = re.findall(r"`([\w.-]+)`  (baseline \w+ \S+) · (MCP \w+ \S+)", report)
        assert {task: (base, mcp) for task, base, mcp in lines} == {
            SLUG: ("baseline passed 1.00", "MCP passed 1.00"),
            MERGE: ("baseline failed 0.00", "MCP passed 0.50"),  # its reference fix is partial
        }, report
        assert "baseline 1/2 (50.0 %)" in report and "MCP 2/2 (100.0 %)" in report
        # Usage comes from the trials Harbor wrote (found by their `org/<task id>` names), priced as CSB does.
        costs = re.search(r"Usage: baseline .+?, \$([\d.]+) · MCP .+?, \$([\d.]+)", report)
        assert costs is not None, report
        assert costs.groups() == (f"{lane_cost(h.repo, 'baseline'):.2f}", f"{lane_cost(h.repo, 'mcp'):.2f}")
        jobs = job_folders(h.repo)
        assert len(jobs) == 4 and len({job.parent for job in jobs}) == 2, jobs  # two to a jobs folder
        assert all(trial_in_job(job) is not None for job in jobs)
        results = trial_results(h.repo)
        assert len(results) == 4
        # Harbor 0.25 names the trial's task after task.toml's `[task] name`; Harbor wrote these.
        assert {result["task_name"] for result in results} == {f"csb-example/{task}" for task in TASKS}
        assert all(result["agent_info"]["version"] == "standin" for result in results)  # type: ignore[index]


def test_check_names_the_pinned_harbor_and_it_accepts_the_lane_command(tmp_path: Path, harbor: Path) -> None:
    env = bot_env(tmp_path, CSB_HARBOR=str(harbor), HARBOR_ENV=HOST_ROOT_ENV)
    result = run(["check"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"✓ harbor 0.25.0: {harbor}" in lines
    assert any(line.startswith("✓ harbor accepts the lane command") for line in lines), lines
    assert "✓ harbor loads the task.toml of 5 sampled tasks" in lines


async def test_cancel_stops_harbor_mid_trial_and_its_cancelled_error_reads_as_cancelled(
    tmp_path: Path, harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", MERGE: "hang"})
    repo = copy_bench(tmp_path)
    suite_file = write_suite(repo)
    async with running_bot(tmp_path, repo=repo, csb_harbor=str(harbor)) as h:
        card = await approved_run(h, f"run --suite-file {suite_file} --parallel 2")
        assert running_count(h.bot.engine.executor) == 2
        await until(lambda: agents_started(h.repo, 2), "both lanes' agents to start inside Harbor")
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Cancel")
        await h.deliver()
        (view_id,) = h.standin.views
        await h.driver.submit_view(REQUESTER, view_id, modal_values("cancel", "real harbor"))
        await h.deliver()
        # SIGINT to Harbor, which cancels the trial and says so
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        assert set((await lane_states(h)).values()) == {LaneStatus.CANCELLED}
        assert await run_state(h) is RunState.CANCELLED
        assert "cancelled run #1: real harbor" in thread_texts(h, card)
        assert exception_types(h.repo) == ["CancelledError"] * 2
        started = [lane for lane in await lanes_of(h) if lane.exit_code is not None]
        assert len(started) == 2 and {lane.stop_kind for lane in started} == {"cancel"}, started
    assert roots_left(tmp_path) == []


async def test_a_lane_past_its_time_limit_is_stopped_and_reads_as_timeout(
    tmp_path: Path, harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {f"{SLUG}/mcp": "hang"})
    repo = copy_bench(tmp_path)
    suite_file = write_suite(repo, {SLUG: TASKS[SLUG]})
    async with running_bot(tmp_path, repo=repo, csb_harbor=str(harbor)) as h:
        card = await approved_run(h, f"run --suite-file {suite_file} --parallel 2")
        await until(lambda: agents_started(h.repo, 2), "both lanes' agents to start inside Harbor")
        executor = h.bot.engine.executor
        while running_count(executor) > 1:  # the baseline lane finishes; the MCP lane hangs on
            await wait_any(executor)
        await h.bot.engine.tick()
        (hanging,) = [lane for lane in await lanes_of(h) if lane.state is LaneStatus.RUNNING]
        h.clock.advance(timedelta(seconds=hanging.timeout_sec + 1))
        await run_until_idle(h.bot.engine, h.bot.store)  # SIGINT: Harbor cancels the trial it was running
        await h.deliver()
        states = await lane_states(h)
        assert states == {(SLUG, "baseline"): LaneStatus.PASSED, (SLUG, "mcp"): LaneStatus.TIMEOUT}
        (stopped,) = [lane for lane in await lanes_of(h) if lane.id == hanging.id]
        assert stopped.stop_kind == "timeout" and stopped.attempt == 1
        report = card_text(h.thread(card)[-1])
        assert "MCP timeout" in report, report
        assert sorted(map(str, exception_types(h.repo))) == ["CancelledError", "None"]
    assert roots_left(tmp_path) == []


async def test_a_bot_killed_mid_run_and_restarted_finishes_every_lane_once_on_real_harbor(
    tmp_path: Path, harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot is SIGKILLed while Harbor runs both trials of a pair, and Harbor carries on alone. The
    restarted bot takes the lanes back by their markers and reads what Harbor wrote: each lane ran once."""
    monkeypatch.setenv("HARBOR_STANDIN_DELAY", "3")  # the agents are still at work when the bot dies
    async with world(tmp_path, f"sqlite:///{tmp_path / 'bot.db'}") as w:
        w.env["CSB_HARBOR"] = str(harbor)
        suite_file = write_suite(w.repo, {MERGE: TASKS[MERGE]})
        first = await w.start_bot()
        await request_and_approve(w, first, f"run --suite-file {suite_file} --parallel 2")
        await until(lambda: agents_started(w.repo, 2), "two lanes' agents to start inside Harbor")
        first.kill()
        assert (await w.lane_states()).count("running") == 2

        await w.start_bot()
        await until(w.finished, "the run to finish", deadline=180)
        states = {(lane.task_id, str(lane.role)): lane.state for lane in await w.lanes()}
        assert states == {(MERGE, "baseline"): LaneStatus.FAILED, (MERGE, "mcp"): LaneStatus.PASSED}
        jobs = job_folders(w.repo)
        assert len(jobs) == 2 and all(trial_in_job(job) is not None for job in jobs), jobs  # each ran once
    assert roots_left(tmp_path) == []
