"""`/csb coverage` end to end on the example bench: from nothing, from a finished staging run, from the
MANIFEST's run_history (the run promoted by hand, counted once), and its refusals; nothing is written.

The example bench's selection (`configs/selected_benchmark_tasks.json`) holds two `csb_sdlc_fix` tasks
and one `csb_sdlc_debug` task; the run is `csb_sdlc_fix` from the suite file, whose third task is not in
the selection, so only two of its pairs count."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import CHANNEL, Harness, running_bot
from test_e2e_compare import png_size
from test_e2e_promote import _ask, _finished_run
from test_e2e_run import card_text

from bot.csb.promotion.manifest_diff import official_folders
from bot.csb.promotion.manifest_file import write_manifest
from bot.csb.promotion.manifest_scan import build_manifest, scan
from bot.domain.clock import ManualClock
from bot.domain.states import LaneStatus
from bot.playground import APPROVER, OUTSIDER, REQUESTER
from bot.playground.payloads import buttons
from bot.store import runs

pytestmark = pytest.mark.slow  # real child processes

SELECTION = "`configs/selected_benchmark_tasks.json`"
DEBUG_NONE = (
    "  no valid baseline run: 1  `lru-cache-eviction-debug-001`\n"
    "  no valid MCP run: 1  `lru-cache-eviction-debug-001`"
)


OFFER = (
    "Request runs of what is missing, each wave through the approval card: *Fill gaps* for the tasks "
    "with no valid run on a lane, *Plan variance* for CSB's waves to the target. "
    "Counted again when you click."
)


async def _answer(h: Harness, text: str) -> str:
    """The answer's words, without the buttons' message under it (`test_fill_gaps_button_…`)."""
    return (await _ask(h, text)).removesuffix(f"\n{OFFER}")


def _tree(h: Harness) -> list[str]:
    return sorted(str(p.relative_to(h.repo)) for p in h.repo.rglob("*"))


async def _refusals(h: Harness) -> None:
    for text, words in (
        (
            "coverage nosuch",
            f"`nosuch` is not a suite of {SELECTION}; its suites: csb_sdlc_fix, csb_sdlc_debug",
        ),
        ("coverage csb_sdlc_fx", "did you mean `csb_sdlc_fix`?"),
        ("coverage --target 0", "`--target` takes a number of runs from 1 to 20; got `0`"),
        ("coverage --target 10000", "`--target` takes a number of runs from 1 to 20; got `10000`"),
        ("coverage --colour red", "unknown flag `--colour`"),
    ):
        reply = await _ask(h, text)
        assert words in reply, (text, reply)
        assert "/csb coverage [suite…] [--model M] [--target N] [--staging] [--fill | --plan]" in reply


async def test_coverage_counts_official_and_staging_runs_and_plans_csb_waves(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await _refusals(h)
        assert await _answer(h, "coverage") == "\n".join(
            [
                f"*Coverage* of {SELECTION} against 3 valid runs per task and lane",
                "_official: no MANIFEST yet (none counted)_",
                "*csb_sdlc_fix* (2 tasks): baseline 0/6, MCP 0/6 runs; still needed: 6 baseline, 6 MCP",
                "  no valid baseline run: 2  `slugify-punctuation-fix-001`, `pagination-offset-fix-001`",
                "  no valid MCP run: 2  `slugify-punctuation-fix-001`, `pagination-offset-fix-001`",
                "*csb_sdlc_debug* (1 task): baseline 0/3, MCP 0/3 runs; still needed: 3 baseline, 3 MCP",
                DEBUG_NONE,
                "*Variance plan* (CSB's `plan_variance_runs.py --target 3`; "
                "*Plan variance* or `--plan` requests it, *Fill gaps* or `--fill` the tasks with none):",
                "• wave 1, both lanes: 3 tasks (6 lanes)",
                "• wave 2, both lanes: 3 tasks (6 lanes)",
                "• wave 3, both lanes: 3 tasks (6 lanes)",
            ]
        )
        (chart,) = [f for f in h.standin.files.shared() if f.filename == "coverage.png"]
        assert chart.content is not None and png_size(chart.content) == (960, 540)
        assert chart.extra["alt_txt"] == (
            "Valid runs done per suite against the target (3 per task and lane): "
            "csb_sdlc_fix: baseline 0/6, MCP 0/6; csb_sdlc_debug: baseline 0/3, MCP 0/3"
        )
        (data,) = [f for f in h.standin.files.shared() if f.filename == "coverage.csv"]
        assert data.content is not None and data.content.decode().splitlines() == [
            "suite,tasks,target,expected_runs,baseline_runs,mcp_runs,baseline_needed,mcp_needed",
            "csb_sdlc_fix,2,3,6,0,0,6,6",
            "csb_sdlc_debug,1,3,3,0,0,3,3",
        ]
        folder = await _finished_run(h)
        staging = await _answer(h, "coverage --staging")
        assert (
            "_official: no MANIFEST yet (none counted); staging: 1 finished run not in the MANIFEST_"
            in staging
        )
        assert (
            "*csb_sdlc_fix* (2 tasks): baseline 2/6, MCP 2/6 runs; still needed: 4 baseline, 4 MCP\n*"
            in staging
        )
        assert staging.endswith(
            "• wave 1, both lanes: 3 tasks (6 lanes)\n"
            "• wave 2, both lanes: 3 tasks (6 lanes)\n"
            "• wave 3, both lanes: 1 task (2 lanes)"
        )

        official = h.repo / "runs" / "official"  # the run promoted by hand, with its MANIFEST
        shutil.copytree(folder, official / folder.name)
        write_manifest(
            official / "MANIFEST.json", build_manifest(scan(official_folders(official)), ManualClock().now())
        )
        before = _tree(h)
        assert await _answer(h, "coverage csb_sdlc_fix --target 1") == "\n".join(
            [
                f"*Coverage* of {SELECTION} against 1 valid run per task and lane",
                "_official: the MANIFEST's run_history_",
                "*csb_sdlc_fix* (2 tasks): baseline 2/2, MCP 2/2 runs; still needed: 0 baseline, 0 MCP",
                "Every task has 1 valid run on both lanes: nothing to plan.",
            ]
        )
        both = await _answer(h, "coverage --target 2 --staging")  # the staging run is in the MANIFEST: once
        assert "staging: 0 finished runs not in the MANIFEST_" in both
        assert "*csb_sdlc_fix* (2 tasks): baseline 2/4, MCP 2/4 runs; still needed: 2 baseline, 2 MCP" in both
        assert both.endswith(
            "• wave 1, both lanes: 3 tasks (6 lanes)\n• wave 2, both lanes: 1 task (2 lanes)"
        )
        (official / "MANIFEST.json").write_text('{"run_history": {"csb_sdlc_fix/baseline": []}}')
        broken = await _answer(h, "coverage")
        assert (
            "`runs/official/MANIFEST.json`: run_history `csb_sdlc_fix/baseline` is not an object of tasks"
            in broken
        )
        assert _tree(h) == before


async def test_fill_and_plan_request_csb_waves_through_the_approval_card(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        selected = json.loads((h.repo / "configs" / "selected_benchmark_tasks.json").read_text())["tasks"]
        fill = "configs/harnesses/gap_fill_both_20260101T000000.json"
        assert await _ask(h, "coverage csb_sdlc_fix --fill") == (
            "*1 request for approval*, each over a selection file in CSB's shape:\n"
            f"• #1: wave 1, both lanes: 2 tasks (4 lanes), `{fill}`"
        )
        assert json.loads((h.repo / fill).read_text()) == {
            "metadata": {"description": "Gap fill: tasks with no valid run on either lane", "task_count": 2},
            "tasks": selected[:2],  # the selection's task objects, copied as they are
        }
        (card,) = h.cards()
        assert f"*Suite*\n`{fill}`\n*Config*\n`paired`" in card_text(card)

        manifest = h.repo / "runs" / "official" / "MANIFEST.json"
        manifest.parent.mkdir(parents=True)
        counts = {
            "csb_sdlc_fix/baseline-local-direct": {
                "slugify-punctuation-fix-001": 2,
                "pagination-offset-fix-001": 1,
            },
            "csb_sdlc_fix/mcp-remote-direct": {"slugify-punctuation-fix-001": 1},
        }
        history = {key: {task: {"n_runs": n} for task, n in tasks.items()} for key, tasks in counts.items()}
        manifest.write_text(json.dumps({"run_history": history}))
        waves = "configs/variance_reruns/wave{}_{}_20260101T000000.json"
        assert await _ask(h, "coverage --plan --target 2") == "\n".join(
            [
                "*4 requests for approval*, each over a selection file in CSB's shape:",
                f"• #2: wave 1, both lanes: 2 tasks (4 lanes), `{waves.format(1, 'both')}`",
                f"• #3: wave 1, MCP only (`--full-only`): 1 task (1 lane), `{waves.format(1, 'mcp_only')}`",
                f"• #4: wave 2, both lanes: 1 task (2 lanes), `{waves.format(2, 'both')}`",
                f"• #5: wave 2, MCP only (`--full-only`): 1 task (1 lane), `{waves.format(2, 'mcp_only')}`",
            ]
        )
        tasks = {
            name: [t["task_id"] for t in json.loads((h.repo / waves.format(*name)).read_text())["tasks"]]
            for name in ((1, "both"), (1, "mcp_only"), (2, "both"), (2, "mcp_only"))
        }
        assert tasks == {
            (1, "both"): ["pagination-offset-fix-001", "lru-cache-eviction-debug-001"],
            (1, "mcp_only"): ["slugify-punctuation-fix-001"],
            (2, "both"): ["lru-cache-eviction-debug-001"],
            (2, "mcp_only"): ["pagination-offset-fix-001"],
        }
        one_lane = card_text(
            h.cards()[2]
        )  # request #3: its baseline counterpart is not in the MANIFEST's runs
        assert "`full-only` · full config `mcp-remote-direct`" in one_lane
        assert ":x: No clean counterpart result for 1 task: `slugify-punctuation-fix-001`" in one_lane
        assert "nothing to request: every task already has 1 valid run" not in await _ask(
            h, "coverage --fill"
        )
        assert "give --fill or --plan, not both" in await _ask(h, "coverage --fill --plan")


async def test_fill_gaps_button_requests_exactly_the_gap_and_the_run_covers_it(
    tmp_path: Path, db_url: str
) -> None:
    """The answer's buttons repeat its question (suite, model, target, staging); the click counts again,
    writes the gap-fill file and posts the approval card; approved, the run covers exactly the gap."""
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        manifest = h.repo / "runs" / "official" / "MANIFEST.json"
        manifest.parent.mkdir(parents=True)
        one_run = {"slugify-punctuation-fix-001": {"n_runs": 1}}
        history = {"csb_sdlc_fix/baseline-local-direct": one_run, "csb_sdlc_fix/mcp-remote-direct": one_run}
        manifest.write_text(json.dumps({"run_history": history}))
        answer = await _ask(h, "coverage csb_sdlc_fix --model sonnet --target 2")
        assert (
            "_official: the MANIFEST's run_history; "
            "the MANIFEST's run_history records no model: its runs count whatever the model_"
        ) in answer
        offer = h.standin.ephemerals(REQUESTER)[-1]
        assert [(b.text, b.value) for b in buttons(offer["blocks"])] == [
            ("Fill gaps", "csb_sdlc_fix --model sonnet --target 2 --fill"),
            ("Plan variance", "csb_sdlc_fix --model sonnet --target 2 --plan"),
        ]
        assert h.cards() == [] and not (h.repo / "configs" / "harnesses").exists()  # nothing asked yet

        await h.driver.click_ephemeral_button(REQUESTER, "Fill gaps")
        await h.deliver()
        fill = "configs/harnesses/gap_fill_both_20260101T000000.json"
        assert h.ephemeral_texts(REQUESTER)[-1] == (
            "*1 request for approval*, each over a selection file in CSB's shape:\n"
            f"• #1: wave 1, both lanes: 1 task (2 lanes), `{fill}`"
        )
        selected = json.loads((h.repo / "configs" / "selected_benchmark_tasks.json").read_text())["tasks"]
        assert json.loads((h.repo / fill).read_text())["tasks"] == [selected[1]]  # as the selection has it
        (card,) = h.cards()
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.run_lanes()
        async with h.bot.store.read() as session:
            lanes = await runs.run_lanes(session, 1)
        assert sorted((lane.task_id, lane.config) for lane in lanes) == [
            ("pagination-offset-fix-001", "baseline-local-direct"),
            ("pagination-offset-fix-001", "mcp-remote-direct"),
        ]
        assert {lane.state for lane in lanes} <= {LaneStatus.PASSED, LaneStatus.FAILED}


async def test_a_stale_or_forged_coverage_button_asks_nothing(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await _ask(h, "coverage csb_sdlc_debug --target 1")
        offer = h.standin.ephemerals(REQUESTER)[-1]
        assert [b.text for b in buttons(offer["blocks"])] == ["Fill gaps", "Plan variance"]
        manifest = h.repo / "runs" / "official" / "MANIFEST.json"  # the gap is filled after the answer
        manifest.parent.mkdir(parents=True)
        done = {"lru-cache-eviction-debug-001": {"n_runs": 1}}
        history = {"csb_sdlc_debug/baseline-local-direct": done, "csb_sdlc_debug/mcp-remote-direct": done}
        manifest.write_text(json.dumps({"run_history": history}))
        before = _tree(h)
        await h.driver.click_ephemeral_button(REQUESTER, "Plan variance")
        await h.deliver()
        assert h.ephemeral_texts(REQUESTER)[-1].startswith(
            "nothing to request: every task already has 1 valid run on both lanes"
        )
        await h.driver.click_ephemeral_button(REQUESTER, "Fill gaps", value="--target 1 --plan")  # forged
        await h.deliver()
        assert h.ephemeral_texts(REQUESTER)[-1] == (
            "this button is not valid any more; ask `/csb coverage` again"
        )
        assert _tree(h) == before and h.cards() == []


async def test_who_may_not_request_runs_gets_no_file_from_a_button_or_tasks(
    tmp_path: Path, db_url: str
) -> None:
    staging_for_alice = f'[policy.staging.requesters]\nusers = ["{REQUESTER}"]\n'
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=staging_for_alice) as h:
        before = _tree(h)
        await h.driver.slash_command(OUTSIDER, "coverage csb_sdlc_debug")  # reading is not requesting
        await h.deliver()
        await h.driver.click_ephemeral_button(OUTSIDER, "Fill gaps")
        await h.deliver()
        await h.driver.slash_command(OUTSIDER, "run --tasks lru-cache-eviction-debug-001")
        await h.deliver()
        button, tasks = h.ephemeral_texts(OUTSIDER)[-2:]
        for refusal in (button, tasks):
            assert f"<@{REQUESTER}>" in refusal and "may request" in refusal, refusal
        assert _tree(h) == before and h.cards() == []
