"""End to end through the engine and the example bench: a lane the bot starts is the lane CSB's harness
would start (environment, Dockerfile variant, job folder), and CSB's status tool reads what it wrote with
the verdicts the bot reported.

The agent stand-in (configs/example-bench/agents) records the environment it ran with in
`<trial>/agent/lane-env.json`; these tests read those records.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from engine_kit import EngineKit, engine_kit, make_accounts
from harness import CHANNEL, running_bot
from idle import run_until_idle
from test_e2e_run import card_text, labels, request_card
from waiting import until

from bot.domain.outcome import LaneStatus
from bot.domain.spec import Mode
from bot.engine.accounts import account_pool, default_parallel
from bot.playground import APPROVER
from bot.slack.views.events import stored_text
from bot.store import outbox, runs
from bot.store.models import Lane, OutboxKind, RunState

pytestmark = pytest.mark.slow

SLUG = "slugify-punctuation-fix-001"
ARTIFACT = "changelog-entry-artifact-001"
VARIANTS = "configs/selected_variant_tasks.json"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _agent_hangs(kit: EngineKit, lane: Lane) -> bool:
    """The lane's Harbor (the stand-in) says in its log that its agent hangs: the trial is under way."""
    log = kit.repo / lane.log_path
    return log.is_file() and "agent: hanging until signalled" in log.read_text(errors="replace")


def _trial_of(kit: EngineKit, lane: Lane) -> Path:
    """The one trial folder in the job folder this lane's attempt named."""
    job = kit.repo / lane.jobs_dir / f"csb_r{lane.run_id}_l{lane.id}_a{lane.attempt}"
    [trial] = [path for path in job.iterdir() if path.is_dir()]
    return trial


def _record(kit: EngineKit, lane: Lane) -> dict[str, Any]:
    return json.loads((_trial_of(kit, lane) / "agent" / "lane-env.json").read_text())


async def test_every_lane_runs_with_the_harness_environment(tmp_path: Path) -> None:
    homes = make_accounts(tmp_path, "account1", "account2")
    async with engine_kit(tmp_path) as kit:
        kit.env["SLACK_BOT_TOKEN"] = "xoxb-never-in-a-lane"
        kit.env.pop("PYTHONPATH", None)
        (kit.repo / ".env.local").write_text("export SOURCEGRAPH_URL=https://sg.example\nNOT_EXPORTED=1\n")
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        lanes = await kit.lanes(run_id)
        assert {lane.state for lane in lanes} <= {LaneStatus.PASSED, LaneStatus.FAILED}
        for lane in lanes:
            seen = _record(kit, lane)
            source = kit.repo / lane.task_path
            mcp = lane.role == "mcp"
            assert seen["HOME"] == lane.account and lane.account.startswith(str(homes))
            assert seen["USE_SUBSCRIPTION"] == "true" and seen["DOCKER_BUILDKIT"] == "1"
            assert seen["REPO_ROOT"] == str(kit.repo) and seen["PYTHONPATH"] == f"{kit.repo}:"
            assert seen["SOURCEGRAPH_URL"] == "https://sg.example"  # exported by .env.local
            assert seen["SLACK_VARIABLES"] == []
            assert seen["TASK_SOURCE_DIR"] == str(source)  # the original folder, in both lanes
            assert seen["BASELINE_MCP_TYPE"] == ("sourcegraph_full" if mcp else "none")
            assert seen["INSTRUCTION_VARIANT"] == ("mcp" if mcp else "default")
            variant = "Dockerfile.sg_only" if mcp else "Dockerfile"
            assert seen["dockerfile_sha256"] == _sha(source / "environment" / variant)
            if not mcp:
                assert seen["instruction_file"] == str(source / "instruction.md")
                continue
            repos = "sg-evals/textkit" if lane.task_id == SLUG else ""
            assert seen["SOURCEGRAPH_REPOS"] == repos  # read from the Dockerfile the lane was built from
            picked = Path(seen["instruction_file"])
            if lane.task_id == SLUG:
                assert picked == source / "instruction_mcp.md"
            else:  # no variant instruction: Harbor's own, of the task copy, which is gone once the lane ended
                assert re.fullmatch(rf"mcp_{lane.task_id}_[0-9a-f]{{6}}", picked.parent.name)
                assert not picked.parent.exists()


async def test_an_artifact_config_builds_both_lanes_from_their_variants(tmp_path: Path) -> None:
    async with engine_kit(tmp_path) as kit:
        run_id = await kit.approve(
            "csb_sdlc_document", selection_file=VARIANTS, full_config="mcp-remote-artifact", parallel=2
        )
        await run_until_idle(kit.engine, kit.store)
        lanes = {lane.role: lane for lane in await kit.lanes(run_id)}
        assert lanes["baseline"].config == "baseline-local-artifact"
        assert (lanes["baseline"].state, lanes["mcp"].state) == (LaneStatus.FAILED, LaneStatus.PASSED)
        environment = kit.repo / lanes["mcp"].task_path / "environment"
        for role, variant, prefix in (
            ("baseline", "Dockerfile.artifact_baseline", "bl_"),
            ("mcp", "Dockerfile.artifact_only", "mcp_"),
        ):
            seen = _record(kit, lanes[role])
            assert seen["dockerfile_sha256"] == _sha(environment / variant)
            trial = json.loads((_trial_of(kit, lanes[role]) / "result.json").read_text())
            assert re.fullmatch(rf"{prefix}{ARTIFACT}_[0-9a-f]{{6}}", trial["task_name"])  # CSB's copy name
        assert _record(kit, lanes["mcp"])["SOURCEGRAPH_REPOS"] == "sg-evals/relnotes"
        assert _record(kit, lanes["mcp"])["BASELINE_MCP_TYPE"] == "artifact_full"


async def test_a_scored_agent_timeout_counts_as_scored(tmp_path: Path) -> None:
    async with engine_kit(tmp_path) as kit:
        kit.script({f"{SLUG}/mcp": "timeout"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        lane = next(lane for lane in await kit.lanes(run_id) if (lane.task_id, lane.role) == (SLUG, "mcp"))
        assert (lane.state, lane.reward, lane.exception_type) == (LaneStatus.PASSED, 1.0, "AgentTimeoutError")
        assert lane.infra_failures == 0 and lane.attempt == 1


async def test_cancel_gives_cancelled_although_harbor_wrote_a_cancelled_error(tmp_path: Path) -> None:
    async with engine_kit(tmp_path) as kit:
        kit.script({SLUG: "hang"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        running = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        assert len(running) == 2
        # Cancelled once Harbor is in its trials (its SIGINT handling in place): on a loaded machine a
        # lane's SIGINT could otherwise land while Harbor still starts, and end it before any result.
        await until(lambda: all(_agent_hangs(kit, lane) for lane in running), "both lanes' agents to hang")
        async with kit.store.write() as session:
            assert await runs.move_run(
                session, run_id, from_states=[RunState.RUNNING], to=RunState.CANCELLING
            )
        await run_until_idle(kit.engine, kit.store)
        lanes = {lane.id: lane for lane in await kit.lanes(run_id)}
        for lane in running:
            assert lanes[lane.id].state is LaneStatus.CANCELLED
            trial = json.loads((_trial_of(kit, lanes[lane.id]) / "result.json").read_text())
            assert trial["exception_info"]["exception_type"] == "CancelledError"  # what Harbor wrote
        assert (await kit.run(run_id)).state is RunState.CANCELLED


# --- CSB's status tool, rule by rule (aggregate_status.py: scan, suite detection, skips, config folders,
# trial folders, classify_task and task name normalisation), written here from its specification ----------

_SDLC = ("feature", "refactor", "build", "debug", "design", "document", "fix", "secure", "test", "understand")
_ORG = (
    "crossrepo_tracing", "crossrepo", "security", "migration", "incident", "onboarding", "compliance",
    "crossorg", "domain", "org", "platform",
)  # fmt: skip
DIR_PREFIX_TO_SUITE = [(f"csb_sdlc_{p}_", f"csb_sdlc_{p}") for p in _SDLC] + [
    (f"csb_org_{p}_", f"csb_org_{p}") for p in _ORG
]
SKIP_PATTERNS = ("__broken_verifier", "validation_test", "archive", "__v1_hinted", "__aborted")
LEGACY_CONFIGS = {
    "baseline", "sourcegraph_full", "sourcegraph_base", "sourcegraph_isolated", "sg_only_env", "sourcegraph",
    "deepsearch", "artifact_full",
}  # fmt: skip
CONFIG_NAME = re.compile(r"^(baseline|mcp)-(local|remote)-(direct|artifact)$")
STATUS_OF = {"passed": "completed_pass", "failed": "completed_fail", "errored": "errored"}


def _detect_suite(name: str) -> str | None:
    return next((suite for prefix, suite in DIR_PREFIX_TO_SUITE if name.startswith(prefix)), None)


def _should_skip(name: str) -> bool:
    return any(pattern in name for pattern in SKIP_PATTERNS)


def _iter_task_dirs(config_path: Path) -> list[Path]:
    found: list[Path] = []
    for entry in sorted(config_path.iterdir()):
        if not entry.is_dir() or _should_skip(entry.name):
            continue
        if entry.name.startswith("20"):
            found += [t for t in sorted(entry.iterdir()) if t.is_dir() and not t.name.startswith("20")]
        elif "__" in entry.name:
            found.append(entry)
        elif entry.name.startswith(("ccb_", "csb_")):
            found += [t for t in sorted(entry.iterdir()) if t.is_dir() and not _should_skip(t.name)]
    return found


def _normalize_sdlc_task_name(name: str) -> str:
    name = re.sub(r"^sdlc_[a-z]+_", "", name)
    match = re.match(r"^(.+)_[A-Za-z0-9]{6}$", name)
    return match.group(1) if match and "-" in match.group(1) else name


def _classify_task(trial: Path) -> tuple[str, str]:
    name = trial.name.rsplit("__", 1)[0]
    data = json.loads((trial / "result.json").read_text())
    if data.get("task_name"):
        name = _normalize_sdlc_task_name(data["task_name"])
    rewards = (data.get("verifier_result") or {}).get("rewards") or {}
    reward = rewards.get("reward") if rewards.get("reward") is not None else rewards.get("score")
    reward = float(reward) if reward is not None else None
    info = data.get("exception_info")
    if info is not None:
        if (info.get("exception_type") or info.get("type")) == "AgentTimeoutError" and reward is not None:
            return name, "completed_pass" if reward > 0 else "completed_fail"
        return name, "errored"
    return name, "completed_pass" if reward is not None and reward > 0 else "completed_fail"


def csb_status(runs_dir: Path) -> dict[tuple[str, str, str], list[str]]:
    """(suite, config, task name) → statuses of every trial CSB's status tool finds under `runs_dir`."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for run in sorted(runs_dir.iterdir()):
        suite = _detect_suite(run.name)
        if not run.is_dir() or suite is None or _should_skip(run.name):
            continue
        for config in sorted(run.iterdir()):
            if not config.is_dir() or not (config.name in LEGACY_CONFIGS or CONFIG_NAME.match(config.name)):
                continue
            for trial in _iter_task_dirs(config):
                name, status = _classify_task(trial)
                found.setdefault((suite, config.name, name), []).append(status)
    return found


async def test_csbs_status_tool_finds_every_trial_with_the_bots_verdict(tmp_path: Path) -> None:
    """All 14 lanes of the three suites start at once (same second, shared jobs dirs): no collision,
    one run folder per suite, and CSB's rules find each trial once with the verdict the bot reported."""
    async with engine_kit(tmp_path, global_slots=14) as kit:
        kit.script({f"{SLUG}/mcp": "error", "csv-quoting-debug-001/baseline": "timeout"})
        run_id = await kit.approve(None, parallel=14)
        await kit.engine.tick()
        assert len([s for s in (await kit.states(run_id)).values() if s == "running"]) == 14
        await run_until_idle(kit.engine, kit.store)
        lanes = await kit.lanes(run_id)
        assert len(lanes) == 14 and all(lane.attempt == 1 for lane in lanes)
        found = csb_status(kit.repo / "runs" / "staging")
        expected = {
            (lane.suite, lane.config, lane.task_id if lane.role == "baseline" else f"mcp_{lane.task_id}"): [
                STATUS_OF[lane.state.value]
            ]
            for lane in lanes
        }
        assert found == expected
        assert {Path(lane.jobs_dir).parent.name.split("_haiku_")[0] for lane in lanes} == {
            "csb_sdlc_fix",
            "csb_sdlc_debug",
            "csb_org_onboarding",
        }
        assert found["csb_sdlc_debug", "baseline-local-direct", "csv-quoting-debug-001"] == ["completed_pass"]


async def test_a_lane_never_starts_on_an_expired_account(tmp_path: Path) -> None:
    """account1's token is dead, account3's runs out mid-run, account2 has none at all (not an account):
    every lane runs on an account with at least 5 minutes of token left when it starts."""
    make_accounts(tmp_path, "account1", minutes=-30)
    make_accounts(tmp_path, "account3", minutes=20)
    homes = make_accounts(tmp_path, "account10")
    (homes / "account2").mkdir()
    async with engine_kit(tmp_path, sessions_per_account=2) as kit:
        pool = account_pool(kit.config, kit.env["HOME"])
        assert [Path(home).name for home in pool.homes] == ["account1", "account3", "account10"]  # sort -V
        kit.script({"pagination-offset-fix-001": "hang", "config-merge-nested-fix-001": "hang"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await kit.engine.tick()
        first = {
            lane.id: lane.account for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING
        }
        assert set(first.values()) == {str(homes / "account3"), str(homes / "account10")}
        kit.clock.advance(timedelta(minutes=16))  # account3: 4 minutes left, under CSB's 5
        kit.script({})
        await run_until_idle(kit.engine, kit.store)
        lanes = await kit.lanes(run_id)
        later = [lane.account for lane in lanes if lane.id not in first]
        assert later and set(later) == {str(homes / "account10")}
        assert str(homes / "account1") not in {lane.account for lane in lanes}


def test_default_parallel_follows_csbs_rule() -> None:
    assert default_parallel(3, daytona=False, env={}) == 18
    assert default_parallel(0, daytona=False, env={}) == 6  # the bot's own HOME: one account
    assert default_parallel(3, daytona=True, env={}) == 60
    assert default_parallel(3, daytona=True, env={"DAYTONA_PARALLEL_TASK_CAP": "500"}) == 124
    assert default_parallel(3, daytona=True, env={"DAYTONA_PARALLEL_TASK_CAP": "8"}) == 8


# Stand-ins for CSB's after-batch scripts, written into the checkout copy: each records its argv.
METRICS_SCRIPT = """import json, pathlib, sys
args = sys.argv[1:]
task_dir = pathlib.Path(args[args.index("--task-dir") + 1])
(task_dir / "task_metrics.json").write_text(json.dumps({"argv": args}))
"""
VALIDATE_SCRIPT = """import json, pathlib, sys
args = sys.argv[1:]
jobs, config = pathlib.Path(args[args.index("--jobs-dir") + 1]), args[args.index("--config") + 1]
trials = sorted(jobs.glob("*/*/result.json"))
flag = {"task_name": "pagination-offset-fix-001", "flag": "zero_reward"}
flags = [flag] if config.startswith("baseline") else []
report = {"config": config, "tasks_checked": len(trials), "counts": {"critical": len(flags)}, "flags": flags}
(jobs / "flagged_tasks.json").write_text(json.dumps(report))
sys.exit(1 if flags else 0)
"""


async def test_after_the_run_csbs_scripts_run_and_their_findings_reach_the_thread(tmp_path: Path) -> None:
    async with engine_kit(tmp_path) as kit:
        for path, text in (
            ("scripts/evaluation/extract_task_metrics.py", METRICS_SCRIPT),
            ("scripts/authoring/validate_task_run.py", VALIDATE_SCRIPT),
        ):
            (kit.repo / path).parent.mkdir(parents=True, exist_ok=True)
            (kit.repo / path).write_text(text)
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        await kit.engine.after_batch.wait()
        assert (await kit.run(run_id)).state is RunState.FINISHED
        for lane in await kit.lanes(run_id):
            argv = json.loads((_trial_of(kit, lane) / "task_metrics.json").read_text())["argv"]
            assert argv[2:] == ["--benchmark", "csb_sdlc_fix", "--config", lane.config,
                                "--selected-tasks", "benchmarks/suites/csb-example.json"]  # fmt: skip
        async with kit.store.read() as session:
            notices = [
                stored_text(i.text or "")
                for i in await outbox.due(session, kit.clock.now())
                if i.kind is OutboxKind.NOTICE
            ]
        [text] = [notice for notice in notices if "After the batch" in notice]
        assert "task metrics written for 6 trials" in text
        assert (
            "`csb_sdlc_fix/baseline-local-direct`: 3 checked, 1 critical, flagged: pagination-offset-fix-001"
            in text
        )
        assert "`csb_sdlc_fix/mcp-remote-direct`: 3 checked" in text


async def test_without_the_scripts_nothing_is_posted(tmp_path: Path) -> None:
    async with engine_kit(tmp_path) as kit:
        await kit.approve("csb_org_onboarding", parallel=2)
        await run_until_idle(kit.engine, kit.store)
        await kit.engine.after_batch.wait()
        async with kit.store.read() as session:
            notices = [
                stored_text(i.text or "")
                for i in await outbox.due(session, kit.clock.now())
                if i.kind is OutboxKind.NOTICE
            ]
        assert not [notice for notice in notices if "After the batch" in notice]


async def test_on_daytona_lanes_run_csbs_guarded_environment_with_labels(tmp_path: Path) -> None:
    """HARBOR_ENV=daytona: CSB's GuardedDaytonaEnvironment with its `--ek` labels (so its cost guard counts
    the sandboxes as managed), and the preflight mark its guarded launcher requires."""
    async with engine_kit(tmp_path) as kit:
        kit.env["HARBOR_ENV"] = "daytona"
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await run_until_idle(kit.engine, kit.store)
        for lane in await kit.lanes(run_id):
            assert lane.state in (LaneStatus.PASSED, LaneStatus.FAILED)
            job = json.loads((_trial_of(kit, lane).parent / "config.json").read_text())
            environment = job["environment"]
            assert (environment["type"], environment["import_path"]) == (
                "daytona",
                "ccb_harbor.daytona:GuardedDaytonaEnvironment",
            )
            labels = environment["kwargs"]
            assert labels["label_run_id"] == Path(lane.jobs_dir).parent.name
            assert (labels["label_benchmark"], labels["label_task_id"]) == (
                "csb_org_onboarding",
                lane.task_id,
            )
            assert (labels["label_config"], labels["label_category"]) == (lane.config, "staging")
            assert labels["label_job_name"] == f"csb_r{run_id}_l{lane.id}_a1"
            assert labels["label_mcp_type"] == lane.mcp_type and labels["label_launcher"] == "csb-bot"
            assert _record(kit, lane)["DAYTONA_COST_GUARD_PREFLIGHT_DONE"] == "1"


async def test_a_missing_dockerfile_variant_blocks_approval_naming_the_task(tmp_path: Path) -> None:
    """Through Slack: header-parse-fix-001 has no Dockerfile.sg_only, so its MCP lane cannot run as CSB
    runs it; the card says so and Approve is refused. Its baseline alone needs no variant."""
    async with running_bot(tmp_path) as h:
        card = await request_card(h, f"run csb_sdlc_fix --selection-file {VARIANTS}")
        shown = card_text(card)
        assert (
            "1 task cannot run these lanes: `header-parse-fix-001` (no environment/Dockerfile.sg_only)"
            in shown
        )
        assert labels(card) == ["Reject", "Edit"]
        await h.driver.click(APPROVER, CHANNEL, card["ts"], "approval.approve", value="1:1")
        await h.deliver()
        assert "Approve is refused" in h.ephemeral_texts(APPROVER)[-1]
        artifact = await request_card(
            h, f"run csb_sdlc_document --selection-file {VARIANTS} --full-config mcp-remote-artifact"
        )
        assert "cannot run these lanes" not in card_text(artifact)
        assert labels(artifact) == ["Approve", "Reject", "Edit"]


ACCOUNT_HEALTH = """import json, pathlib, sys
args = sys.argv[1:]
pathlib.Path("account-health-argv.json").write_text(json.dumps(args))
homes = [args[i + 1] for i, arg in enumerate(args) if arg == "--home"]
ready = [home for home in homes if home.endswith("account2")]
print(json.dumps({"ok_to_launch": True, "ready_homes": ready}))
"""


async def test_only_the_homes_csbs_account_health_calls_ready_take_lanes(tmp_path: Path) -> None:
    homes = make_accounts(tmp_path, "account1", "account2")
    async with engine_kit(tmp_path, sessions_per_account=4) as kit:
        script = kit.repo / "scripts" / "infra" / "account_health.py"
        script.parent.mkdir(parents=True)
        script.write_text(ACCOUNT_HEALTH)
        run_id = await kit.approve("csb_sdlc_fix", parallel=4)
        await run_until_idle(kit.engine, kit.store)
        assert {lane.account for lane in await kit.lanes(run_id)} == {str(homes / "account2")}
        argv = json.loads((kit.repo / "account-health-argv.json").read_text())
        assert argv[:2] == ["preflight", "--format"] and argv[argv.index("--min-token-minutes") + 1] == "90"
        assert [argv[i + 1] for i, arg in enumerate(argv) if arg == "--home"] == [
            str(homes / "account1"),
            str(homes / "account2"),
        ]


async def test_a_scip_config_gets_the_mcp_scip_instruction_variant(tmp_path: Path) -> None:
    """`mcp_scip`: CSB's agent looks for instruction_mcp_scip.md, then instruction_mcp.md."""
    async with engine_kit(tmp_path) as kit:
        run_id = await kit.approve(
            "csb_sdlc_fix", full_config="mcp-scip-remote-direct", mode=Mode.FULL_ONLY, parallel=3
        )
        await run_until_idle(kit.engine, kit.store)
        lane = next(lane for lane in await kit.lanes(run_id) if lane.task_id == SLUG)
        seen = _record(kit, lane)
        assert (lane.config, seen["INSTRUCTION_VARIANT"], seen["BASELINE_MCP_TYPE"]) == (
            "mcp-scip-remote-direct",
            "mcp_scip",
            "sourcegraph_full",
        )
        assert seen["instruction_file"] == str(kit.repo / lane.task_path / "instruction_mcp.md")
