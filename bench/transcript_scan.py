"""Judge a trial whose agent transcript is 200 MB, off the event loop, as the engine does when a lane ends.

Makes a trial folder in a temporary directory: a result.json, and an `agent/claude-code.txt` of about
200 MB of stream-JSON lines (assistant text, tool calls, MCP calls among them, tool results, and a few
lines of several megabytes). Then judges it with `asyncio.to_thread(judge_trial, …)` while a ticker on the
event loop measures how late its 10 ms sleeps wake. Prints the wall time, the scan thread's CPU time, the
load average (on a shared machine the wall is the CPU time stretched by the load), the memory added (peak
RSS during the scan over the RSS before it), the loop's worst lag and the verdict's counts.

    .venv/bin/python bench/transcript_scan.py [--mb 200]

Goal: under 3 s and under 50 MB added memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from bot.csb.verdicts import judge_trial
from bot.domain.verdict import LaneVerdict

GOAL_SECONDS = 3.0
GOAL_MB = 50.0


def make_trial(folder: Path, megabytes: int) -> int:
    """A trial folder with a transcript of about `megabytes` MB; returns the MCP calls written."""
    (folder / "agent").mkdir(parents=True)
    result = {
        "task_name": "bench-task-001",
        "agent_result": {"n_input_tokens": 845972, "n_cache_tokens": 835627, "n_output_tokens": 9699},
        "verifier_result": {"rewards": {"reward": 0.5}},
        "exception_info": None,
    }
    (folder / "result.json").write_text(json.dumps(result))
    init = {"type": "system", "subtype": "init", "tools": ["Bash", "mcp__sourcegraph__sg_keyword_search"]}
    text = {"type": "assistant", "message": {"content": [{"type": "text", "text": "reading the code " * 60}]}}
    call = {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {}}]}}
    mcp = {
        "type": "assistant",
        "message": {"content": [{"type": "tool_use", "name": "mcp__sourcegraph__sg_read_file"}]},
    }
    answer = {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x = 1\n" * 200}]}}
    block = "\n".join(json.dumps(line) for line in (text, call, answer, mcp, answer)) + "\n"
    huge = json.dumps({"type": "user", "message": {"content": "y" * (3 * 1024 * 1024)}}) + "\n"
    target = megabytes * 1024 * 1024
    written, calls = 0, 0
    with (folder / "agent" / "claude-code.txt").open("w") as out:
        out.write(json.dumps(init) + "\n")
        while written < target:
            chunk = block * 100
            if written // (50 * 1024 * 1024) != (written + len(chunk)) // (50 * 1024 * 1024):
                chunk += huge  # a line of megabytes every 50 MB
            out.write(chunk)
            written += len(chunk)
            calls += 100
    return calls


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _judged(folder: Path) -> tuple[LaneVerdict | None, float]:
    """The verdict, and the CPU seconds its thread spent on it (the machine's load does not count)."""
    start = time.thread_time()
    verdict = judge_trial(folder, "mcp-remote-direct")
    return verdict, time.thread_time() - start


async def judge(folder: Path) -> tuple[float, float, float, LaneVerdict | None]:
    lag = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal lag
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            lag = max(lag, time.perf_counter() - before - 0.01)

    tick = asyncio.create_task(ticker())
    start = time.perf_counter()
    verdict, cpu = await asyncio.to_thread(_judged, folder)
    wall = time.perf_counter() - start
    done.set()
    await tick
    return wall, cpu, lag, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="transcript size in MB (default 200)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="transcript-scan-") as tmp:
        folder = Path(tmp) / "bench-task-001__AbCdEf1"
        calls = make_trial(folder, args.mb)
        size = (folder / "agent" / "claude-code.txt").stat().st_size / 1024 / 1024
        before = rss_mb()
        wall, cpu, lag, verdict = asyncio.run(judge(folder))
        added = rss_mb() - before
    assert verdict is not None
    print(f"transcript_mb {size:.1f}")
    print(f"wall_s {wall:.2f}")
    print(f"cpu_s {cpu:.2f} (the scan's own thread; wall exceeds it by the machine's load)")
    print(f"load_average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"added_memory_mb {added:.1f}")
    print(f"event_loop_worst_lag_ms {lag * 1000:.1f}")
    print(f"mcp_calls {verdict.mcp_calls} (written {calls}) deep_search {verdict.deep_search_calls}")
    print(f"unread {list(verdict.unread)}")
    met = wall < GOAL_SECONDS and added < GOAL_MB and verdict.mcp_calls == calls
    goal = f"< {GOAL_SECONDS:g} s, < {GOAL_MB:g} MB added, every MCP call counted"
    print(f"goal ({goal}): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
