"""A 264-task paired report with its statistics and charts, and a comparison of two such runs: how long
they take, and whether acks stay at a bare Bolt app's level while the bot draws.

Part 1, in this process: 264 pairs in 11 suites (seeded, baseline and MCP differing), then each step the
bot takes for a finished run, timed: the report's statistics (10,000 bootstrap resamples, overall and
per suite), the report message, the line against official (a comparison of the run with a second
264-task side), both report charts and the comparison chart as PNG, and the charts' CSV.

Part 2, three processes (and the drawing worker): a Bolt app that acks `/csb` and keeps making these
reports as the notifier does (the message in a thread, the comparison and charts in the drawing process,
`bot.slack.drawing`), back to back for the whole measurement; a bare Bolt
app that only acks; and this script sending signed slash commands to each, alternately per round, at
concurrency 1 and 20. The figures are the ack latencies, p50 and p99, of both.

    .venv/bin/python bench/compare_report.py [--rounds 3] [--requests 200]

Goal: the report and its charts in under 2 s; p99 ack at c=20 within 1.5 × the bare app's.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.domain.compare import LaneChoice, Side, TaskResult, compare
from bot.domain.outcome import LaneStatus
from bot.domain.spec import LaneRole
from bot.domain.stats import LaneResult, PairOutcome, summarize, summarize_by_suite
from bot.domain.verdict import ManifestStatus
from bot.playground import CAST, DEFAULT_CHANNELS, REQUESTER, SlackStandin
from bot.playground.payloads import AppContext, slash_command_form
from bot.playground.signing import slack_signature
from bot.slack.drawing import in_worker
from bot.slack.views.charts import comparison_chart, report_chart_csv, report_charts
from bot.slack.views.compare import versus_official_line
from bot.slack.views.report import ReportView, paired_report

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
TOKEN = "xoxb-bench-token"
SECRET = "bench-signing-secret"
TASKS, SUITES = 264, 11
GOAL_SECONDS = 2.0
GOAL_RATIO = 1.5
REPORT = "statistics (overall + per suite, 10,000 resamples each)"
REPORT_STEPS = frozenset({REPORT, "report message", "report charts (2 PNG)", "chart CSV"})


def make_pairs(seed: int = 1) -> list[PairOutcome]:
    rng = random.Random(seed)
    pairs = []
    for i in range(TASKS):
        suite = f"csb_sdlc_suite{i % SUITES:02d}"
        base, mcp = rng.random() < 0.45, rng.random() < 0.6
        pairs.append(PairOutcome(f"task-{i:03d}", suite, _lane(base, rng), _lane(mcp, rng)))
    return pairs


def _lane(passed: bool, rng: random.Random) -> LaneResult:
    reward = round(rng.uniform(0.3, 1.0), 2) if passed else 0.0
    return LaneResult(
        LaneStatus.PASSED if passed else LaneStatus.FAILED, reward, cost_usd=round(rng.uniform(0.2, 2), 2)
    )


def side_of(label: str, pairs: list[PairOutcome]) -> Side:
    results = []
    for pair in pairs:
        for role, lane, config in (
            (LaneRole.BASELINE, pair.baseline, "baseline-local-direct"),
            (LaneRole.MCP, pair.mcp, "mcp-remote-direct"),
        ):
            status = ManifestStatus.PASSED if lane.passed else ManifestStatus.FAILED
            results.append(
                TaskResult(pair.task_id, pair.suite, config, role, status, lane.reward, lane.cost_usd)
            )
    return Side(label, tuple(results))


def draw_everything(
    pairs: list[PairOutcome], official: list[PairOutcome]
) -> tuple[dict[str, float], dict[str, float]]:
    """Each step of a finished run's report, as the notifier runs it: wall and CPU seconds per step."""
    timings: dict[str, float] = {}
    cpu_times: dict[str, float] = {}

    def step(name: str, work):  # type: ignore[no-untyped-def]
        start, cpu = time.perf_counter(), time.process_time()
        value = work()
        timings[name] = time.perf_counter() - start
        cpu_times[name] = time.process_time() - cpu
        return value

    step(
        "statistics (overall + per suite, 10,000 resamples each)",
        lambda: (summarize(pairs), summarize_by_suite(pairs)),
    )
    view = ReportView(run_id=1, output_dirs=["runs/staging/x"], title="bench", model="m", pairs=pairs)
    step("report message", lambda: paired_report(view))
    result = step(
        "comparison with official (264 × 2 lanes)",
        lambda: compare(side_of("#1", pairs), side_of("official", official), LaneChoice.CONFIG),
    )
    step("vs-official line", lambda: versus_official_line(result, 0.05))
    step("report charts (2 PNG)", lambda: report_charts(1, pairs))
    step("comparison chart (PNG)", lambda: comparison_chart(result, "run #1", "official"))
    step("chart CSV", lambda: report_chart_csv(pairs))
    return timings, cpu_times


def draw_report(pairs: list[PairOutcome]) -> None:
    """The report message, which the notifier builds in a thread."""
    paired_report(ReportView(run_id=1, output_dirs=["runs/staging/x"], title="bench", model="m", pairs=pairs))


def draw_versus(pairs: list[PairOutcome], official: list[PairOutcome]) -> str:
    """The line against official, which the notifier computes in the drawing process."""
    return versus_official_line(compare(side_of("#1", pairs), side_of("official", official)), 0.05)


# -- part 2: ack latency while drawing -----------------------------------------------------------------


def serve(kind: str, port: int, slack_api_url: str) -> None:
    """Bolt configured as the bot configures it (a client with its token, the signing secret)."""
    bolt = AsyncApp(client=AsyncWebClient(token=TOKEN, base_url=slack_api_url), signing_secret=SECRET)

    @bolt.command("/csb")
    async def on_csb(ack: AsyncAck) -> None:
        await ack()

    async def events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await bolt.async_dispatch(await to_bolt_request(request)))

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def drawing(app: web.Application) -> None:
        pairs, official = make_pairs(1), make_pairs(2)

        async def loop() -> None:  # as the notifier does: the comparison and the charts in the worker
            while True:
                await asyncio.to_thread(draw_report, pairs)
                await in_worker(draw_versus, pairs, official)
                await in_worker(report_charts, 1, pairs)

        app["drawing"] = asyncio.get_running_loop().create_task(loop())

    app = web.Application()
    app.router.add_post("/slack/events", events)
    app.router.add_get("/healthz", healthz)
    if kind == "drawing":
        app.on_startup.append(drawing)
    web.run_app(app, host=HOST, port=port, print=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


async def wait_healthy(session: aiohttp.ClientSession, url: str) -> None:
    for _ in range(1200):  # a loaded machine may take a while to start two Pythons
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} never answered")


async def load(session: aiohttp.ClientSession, url: str, requests: int, concurrency: int) -> list[float]:
    app = AppContext(team_id="T0PLAY", team_domain="csb-playground", app_id="A0CSBBOT", bot_user_id="UCSBBOT")
    user, channel = next(u for u in CAST if u.id == REQUESTER), DEFAULT_CHANNELS[0]
    counter = iter(range(requests))
    latencies: list[float] = []

    async def worker() -> None:
        for i in counter:
            body = urlencode(
                slash_command_form(app, user, channel, "/csb", "runs", "http://127.0.0.1:9/r", f"{i}.bench")
            )
            stamp = str(int(time.time()))
            headers = {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Slack-Request-Timestamp": stamp,
                "X-Slack-Signature": slack_signature(SECRET, stamp, body),
            }
            start = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"{url} answered {response.status}")
            latencies.append(1000 * (time.perf_counter() - start))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


async def measure(rounds: int, requests: int) -> tuple[float, float]:
    ports = {"drawing": free_port(), "bare": free_port()}
    logs = Path(tempfile.mkdtemp(prefix="compare-bench-"))
    standin = web.AppRunner(SlackStandin(bot_token=TOKEN).build_app())  # answers Bolt's auth.test
    await standin.setup()
    slack_port = free_port()
    await web.TCPSite(standin, HOST, slack_port).start()
    slack_api_url = f"http://{HOST}:{slack_port}/api/"
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--serve", kind, "--port", str(port), "--slack", slack_api_url],
            cwd=ROOT,
            env={**os.environ, "MPLBACKEND": "Agg"},
            stdout=(logs / f"{kind}.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        for kind, port in ports.items()
    ]
    samples: dict[tuple[str, int], list[float]] = {}
    try:
        async with aiohttp.ClientSession() as session:
            for port in ports.values():
                await wait_healthy(session, f"http://{HOST}:{port}/healthz")
            await asyncio.sleep(1)  # the drawing app is now drawing
            for _ in range(rounds):
                for concurrency in (1, 20):
                    for kind, port in ports.items():
                        n = requests if concurrency > 1 else max(20, requests // 4)
                        got = await load(session, f"http://{HOST}:{port}/slack/events", n, concurrency)
                        samples.setdefault((kind, concurrency), []).extend(got)
    finally:
        for child in children:  # a graceful end, so the drawing app's worker process is ended with it
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=120)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=10)
        await standin.cleanup()
    print(f"{'app':<10}{'c':>4}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}")
    for (kind, concurrency), values in sorted(samples.items()):
        print(
            f"{kind:<10}{concurrency:>4}{len(values):>7}{pct(values, 0.5):>10.1f}{pct(values, 0.99):>10.1f}"
        )
    return pct(samples[("drawing", 20)], 0.99), pct(samples[("bare", 20)], 0.99)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--serve", choices=["drawing", "bare"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--slack", help="the Slack stand-in's Web API URL (with --serve)")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.slack)
        return 0
    pairs, official = make_pairs(1), make_pairs(2)
    draw_everything(pairs[:20], official[:20])  # imports and font cache, not counted
    timings, cpu_times = draw_everything(pairs, official)
    print(f"{'step':<60}{'wall':>9}{'CPU':>9}")
    for name, seconds in timings.items():
        print(f"{name:<60}{seconds:>8.3f}s{cpu_times[name]:>8.3f}s")
    total = sum(seconds for name, seconds in timings.items() if name in REPORT_STEPS)
    cpu = sum(seconds for name, seconds in cpu_times.items() if name in REPORT_STEPS)
    print(f"{'the report: statistics, message, charts, CSV':<60}{total:>8.3f}s{cpu:>8.3f}s")
    print(f"{'everything above':<60}{sum(timings.values()):>8.3f}s{sum(cpu_times.values()):>8.3f}s")
    load = os.getloadavg()[0]
    print(
        f"load average {load:.1f} on {os.cpu_count()} cores (above the core count, walls are CPU stretched)"
    )
    drawing_p99, bare_p99 = asyncio.run(measure(args.rounds, args.requests))
    ratio = drawing_p99 / bare_p99
    met = total < GOAL_SECONDS and ratio <= GOAL_RATIO
    print(
        f"goal {'met' if met else 'NOT met'}: report + charts {total:.2f} s wall, {cpu:.2f} s CPU "
        f"(< {GOAL_SECONDS} s); "
        f"p99 ack at c=20 while drawing {drawing_p99:.1f} ms = {ratio:.2f} × bare "
        f"({bare_p99:.1f} ms, ≤ {GOAL_RATIO} ×)"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
