"""A trial folder the bot cannot trust: one bad result.json (nested 100,000 deep, larger than the read cap,
a non-finite reward) ends only its own lane, as `errored` with CSB's `result_json_corrupt`, while the
engine's tick goes on for every other lane. Harbor is the example bench's stand-in, wrapped so that it
spoils the result of the lanes the test names after writing it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from engine_kit import engine_kit
from harness import HARBOR
from idle import run_until_idle

from bot.domain.outcome import LaneStatus

pytestmark = pytest.mark.slow

CORRUPT = "result_json_corrupt"
RESULT_SIZE_LIMIT = 4 * 1024 * 1024  # the read cap the docs state
SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"

# Runs the stand-in, then overwrites the trial result of `<task>/<lane>` as HARBOR_TEST_SPOIL says.
_SPOILER = f"""\
#!{sys.executable}
import json, os, pathlib, subprocess, sys
code = subprocess.call([{str(HARBOR)!r}, *sys.argv[1:]])
args = sys.argv[1:]
folder = pathlib.Path(args[args.index("--path") + 1]).name
# An MCP lane runs a copy named `mcp_<task>_<6>`; its trial folder is named after the copy.
task = folder.split("_", 1)[1].rsplit("_", 1)[0] if folder.startswith(("mcp_", "bl_")) else folder
jobs = pathlib.Path(args[args.index("--jobs-dir") + 1])
lane = "baseline" if os.environ.get("BASELINE_MCP_TYPE") == "none" else "mcp"
how = json.loads(os.environ["HARBOR_TEST_SPOIL"]).get(f"{{task}}/{{lane}}")
for result in jobs.glob(f"*/{{folder[:20]}}*__*/result.json"):
    text = result.read_text()
    if how == "deep":
        text = '{{"task_name": "x", "a": ' + "[" * 100000 + "]" * 100000 + "}}"
    elif how == "huge":
        text = text[:-1] + ', "pad": "' + "x" * ({RESULT_SIZE_LIMIT} + 10) + '"}}'
    elif how in ("Infinity", "NaN", "1e999"):
        data = json.loads(text)
        data["verifier_result"] = {{"rewards": {{"reward": 0.5}}}}
        text = json.dumps(data).replace('"reward": 0.5', '"reward": ' + how)
    result.write_text(text)
sys.exit(code)
"""


@pytest.mark.parametrize("bad", ["Infinity", "NaN", "1e999"])
async def test_bad_results_end_only_their_own_lane(tmp_path: Path, db_url: str, bad: str) -> None:
    spoiler = tmp_path / "spoiling-harbor"
    spoiler.write_text(_SPOILER)
    spoiler.chmod(0o755)
    async with engine_kit(tmp_path, url=db_url, harbor=spoiler, retry_limit=0) as kit:
        spoil = {f"{SLUG}/baseline": "deep", f"{PAGE}/mcp": bad, f"{MERGE}/baseline": "huge"}
        kit.env["HARBOR_TEST_SPOIL"] = json.dumps(spoil)
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)

        lanes = {(lane.task_id, lane.role): lane for lane in await kit.lanes(run_id)}
        for key in [(SLUG, "baseline"), (PAGE, "mcp"), (MERGE, "baseline")]:
            lane = lanes[key]
            assert lane.state is LaneStatus.ERRORED, key
            assert lane.reason is not None and lane.reason.startswith(f"{CORRUPT}: result.json "), lane.reason
            assert lane.reward is None
        assert "nested too deeply" in (lanes[SLUG, "baseline"].reason or "")
        assert "larger than 4 MiB" in (lanes[MERGE, "baseline"].reason or "")
        assert "non-finite" in (lanes[PAGE, "mcp"].reason or "") or "out of range" in (
            lanes[PAGE, "mcp"].reason or ""
        )
        others = [lane for key, lane in lanes.items() if key not in spoil_keys(spoil)]
        assert others and all(lane.state in (LaneStatus.PASSED, LaneStatus.FAILED) for lane in others), [
            (lane.task_id, lane.role, lane.state, lane.reason) for lane in others
        ]
        assert (await kit.run(run_id)).state.value == "finished"
        rewards = [lane.reward for lane in lanes.values() if lane.reward is not None]
        assert all(math.isfinite(reward) for reward in rewards)


def spoil_keys(spoil: dict[str, str]) -> set[tuple[str, str]]:
    return {(key.split("/")[0], key.split("/")[1]) for key in spoil}


async def test_a_suite_file_turned_hostile_voids_its_queued_run_and_the_tick_goes_on(
    tmp_path: Path, db_url: str
) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        hostile_id = await kit.approve("csb_sdlc_fix", parallel=2)
        suite_file = kit.repo / "benchmarks/suites/csb-example.json"
        healthy = suite_file.read_text()
        suite_file.write_text('{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}")
        await kit.engine.tick()  # the run's spec no longer resolves: voided before any lane starts
        assert (await kit.run(hostile_id)).state.value == "cancelled"
        suite_file.write_text(healthy)
        other = await kit.approve("csb_sdlc_debug", parallel=2)
        await run_until_idle(kit.engine, kit.store)
        assert (await kit.run(other)).state.value == "finished"


async def test_a_lane_reason_quoting_its_log_never_keeps_a_secret(tmp_path: Path, db_url: str) -> None:
    leaky = tmp_path / "leaky-harbor"
    leaky.write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        "print('auth failed for token ' + os.environ['SOURCEGRAPH_ACCESS_TOKEN'] + ' (401)')\n"
        "sys.exit(3)\n"
    )
    leaky.chmod(0o755)
    async with engine_kit(tmp_path, url=db_url, harbor=leaky, retry_limit=0) as kit:
        kit.env["SOURCEGRAPH_ACCESS_TOKEN"] = "sgp_lane_secret_value"
        engine = kit.new_engine()  # built with the environment its lanes inherit, token included
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await run_until_idle(engine, kit.store)
        ended = await kit.lanes(run_id)
        assert ended and all(lane.reason == "harbor exited 3 without a trial result" for lane in ended)
        lines = [lane.log_line or "" for lane in ended]
        assert all(line == "auth failed for token [redacted] (401)" for line in lines), lines
        assert not any("sgp_lane_secret_value" in f"{lane.reason} {lane.log_line}" for lane in ended)
