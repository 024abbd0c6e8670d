"""End to end on real Harbor: the bot, driven as Slack drives it, runs the example bench on the pinned Harbor
(`make harbor`) in the bench's host-root environment, with the bench's scripted agent as a Harbor agent.

Harbor runs the verifier and writes every result file here; nothing of Harbor is stood in for. The tests run
on SQLite only (the store's PostgreSQL behaviour is covered elsewhere) and with small parallelism: each
`harbor run` costs a few seconds of CPU, most of it Harbor's own imports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from harness import copy_bench, running_bot
from real_harbor import HOST_ROOT_ENV, TASKS, harbor_or_skip, select_environment, write_suite
from test_cli import bot_env, run
from test_e2e_run import card_text
from test_run_control import approved_run

from bot.csb.results import trial_in_job

pytestmark = pytest.mark.slow

SLUG, MERGE = "slugify-punctuation-fix-001", "config-merge-nested-fix-001"


@pytest.fixture
def harbor(monkeypatch: pytest.MonkeyPatch) -> Path:
    found = harbor_or_skip()
    select_environment(monkeypatch)
    return found


def trial_results(repo: Path) -> list[dict[str, object]]:
    """Every trial result.json Harbor wrote under the checkout's runs/."""
    found = [trial_in_job(job) for job in (repo / "runs").glob("*/*/*/*") if job.is_dir()]
    return [json.loads(path.read_text()) for path in found if path is not None]


async def test_a_paired_run_on_real_harbor_reports_harbors_verdicts(tmp_path: Path, harbor: Path) -> None:
    repo = copy_bench(tmp_path)
    suite_file = write_suite(repo)
    async with running_bot(tmp_path, repo=repo, csb_harbor=str(harbor)) as h:
        card = await approved_run(h, f"run --suite-file {suite_file} --parallel 2")
        await h.run_lanes()
        report = card_text(h.thread(card)[-1])
        lines = re.findall(r"`([\w.-]+)`  (baseline \w+ \S+) · (MCP \w+ \S+)", report)
        assert dict((task, (base, mcp)) for task, base, mcp in lines) == {
            SLUG: ("baseline passed 1.00", "MCP passed 1.00"),
            MERGE: ("baseline failed 0.00", "MCP passed 0.50"),
        }, report
        assert "baseline 1/2 (50.0 %)" in report and "MCP 2/2 (100.0 %)" in report
        results = trial_results(h.repo)
        assert len(results) == 2 * len(TASKS)
        # Harbor 0.25 names the trial's task after task.toml's `[task] name`; Harbor wrote these.
        assert {result["task_name"] for result in results} == {f"csb-example/{task}" for task in TASKS}
        assert all(result["agent_info"]["version"] == "standin" for result in results)  # type: ignore[index]


def test_check_names_the_pinned_harbor_and_it_accepts_the_lane_command(tmp_path: Path, harbor: Path) -> None:
    env = bot_env(tmp_path, CSB_HARBOR=str(harbor), HARBOR_ENV=HOST_ROOT_ENV)
    result = run(["check"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"· harbor 0.25.0: {harbor}" in lines
    assert any(line.startswith("· harbor accepts the lane command") for line in lines), lines
