"""The playground page in a real browser: `/csb run` → the card → switch to the approver → Approve →
the status progresses live and the paired report appears in the card's thread, with its charts.

The whole playground (bot, Slack stand-in, page) runs in-process on a loopback port with its timers on,
as `csb-bot playground` runs it; the browser is Debian's chromium driven by Playwright (no downloaded
browser). A screenshot of the finished page is saved to `.artifacts/playground.png`. The page's own
routes (files, live feed, state) are also checked without a browser.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from harness import EXAMPLE_BENCH, copy_bench, make_settings
from lane_waits import wait_all
from playwright.async_api import Page, async_playwright, expect

from bot.playground import APPROVER, REQUESTER, SlackStandin
from bot.playground.cli import build_playground
from bot.playground.routes import STATIC_DIR, PlaygroundRoutes
from bot.server import BOT_KEY

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / ".artifacts" / "playground.png"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PARAMETERS = ("Model", "Suite", "Config", "Parallel", "Category")
TASKS = ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")
SECOND = 1000  # Playwright timeouts are in milliseconds
# Every wait polls for what the page shows; the bound only stops a hang, so a loaded machine is not a failure.
PATIENCE = 60 * SECOND

browser_test = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (`make test` installs it)"
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def playground(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """`csb-bot playground` in-process on a free port, with its database and CSB checkout in tmp_path."""
    monkeypatch.setenv("CSB_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'playground.db'}")
    monkeypatch.setenv("CSB_REPO", str(copy_bench(tmp_path)))
    monkeypatch.delenv("CSB_CONFIG", raising=False)
    host, port = "127.0.0.1", free_port()
    app = build_playground(host, port)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    try:
        yield f"http://{host}:{port}"
    finally:
        await wait_all(app[BOT_KEY].engine.executor)
        await runner.cleanup()


@pytest.fixture
async def page(playground: str) -> AsyncIterator[Page]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 860})
            page.set_default_timeout(PATIENCE)  # clicks and fills, and
            expect.set_options(timeout=PATIENCE)  # assertions without their own bound
            await page.goto(f"{playground}/")
            yield page
        finally:
            await browser.close()


SCROLL_TO_CARD = """(title) => [...document.querySelectorAll("#messages .bk-header-text")]
    .find((header) => header.textContent.includes(title))?.scrollIntoView({ block: "nearest" })"""


@pytest.mark.slow
@browser_test
async def test_run_approve_and_watch_the_report_arrive(page: Page) -> None:
    failures: list[str] = []
    page.on("pageerror", lambda exc: failures.append(str(exc)))
    await expect(page.locator("#live")).to_have_text("live")

    await page.select_option("#user-switcher", REQUESTER)
    composer = page.get_by_placeholder("Message #benchmarks")
    await composer.fill("/csb run csb_sdlc_fix")
    await composer.press("Enter")

    header = page.locator(".bk-header-text", has_text="CSB run request #1")
    card = page.locator("#messages .msg").filter(has=header)
    for name in PARAMETERS:
        field = card.locator(".bk-field").filter(has_text=re.compile(f"^{name}"))
        await expect(field).to_have_count(1)
    for value in ("anthropic/claude-haiku-4-5-20251001", "csb_sdlc_fix", "paired", "staging"):
        await expect(card).to_contain_text(value)

    await page.select_option("#user-switcher", APPROVER)
    await card.get_by_role("button", name="Approve").click()
    await expect(card).to_contain_text("Approved by @bob")
    await expect(card.get_by_role("button", name="Approve")).to_have_count(0)

    await card.locator(".thread-link").click()  # waits for the first thread reply
    progress = page.get_by_text(re.compile(r"\d+/\d+ (pairs|lanes) done")).first
    await expect(progress).to_be_visible()
    finished = page.get_by_text(re.compile(r"(3/3 pairs|6/6 lanes) done")).first
    await expect(finished).to_be_visible()
    thread = page.locator("#thread")
    await expect(thread).to_contain_text(re.compile(r"Run #1 (finished|report)"))
    for task in TASKS:
        await expect(thread).to_contain_text(task)
    await expect(thread).to_contain_text(re.compile(r"baseline .*MCP"))
    # The report's charts: PNG images in the thread, loaded, with the alt text the bot uploaded them with.
    charts = thread.locator(".file-image img")
    await expect(charts).to_have_count(2)
    await expect(charts.nth(0)).to_have_attribute("alt", re.compile(r"^Bar chart of pass rate per suite"))
    await expect(charts.nth(1)).to_have_attribute("alt", re.compile(r"^Scatter of baseline reward"))
    for index in range(2):
        await expect(charts.nth(index)).to_have_js_property("naturalWidth", 960)
    await expect(thread.locator(".file-link", has_text="run-1-chart-data.csv")).to_have_count(1)

    # The card's parameters beside the report. Live updates may redraw the card at any moment, so the
    # scroll finds it and moves in one step inside the page rather than through a handle that can go stale.
    await expect(card).to_contain_text("Finished")
    await page.evaluate(SCROLL_TO_CARD, "CSB run request #1")
    await page.mouse.move(640, 20)  # no hover highlight in the picture
    SCREENSHOT.parent.mkdir(exist_ok=True)
    await page.screenshot(path=str(SCREENSHOT))
    assert failures == [], failures


@pytest.mark.slow
@browser_test
async def test_reject_through_the_modal_then_open_app_home(page: Page) -> None:
    failures: list[str] = []
    page.on("pageerror", lambda exc: failures.append(str(exc)))
    await expect(page.locator("#live")).to_have_text("live")
    await page.select_option("#user-switcher", REQUESTER)
    composer = page.get_by_placeholder("Message #benchmarks")
    await composer.fill("/csb run csb_sdlc_fix")
    await composer.press("Enter")
    card = page.locator("#messages .msg").filter(has=page.locator(".bk-header-text", has_text="#1"))
    await expect(card.get_by_role("button", name="Reject")).to_be_visible()

    await page.select_option("#user-switcher", APPROVER)
    await card.get_by_role("button", name="Reject").click()  # views.open: the reason modal
    modal = page.get_by_role("dialog")
    await expect(modal).to_be_visible()
    await modal.get_by_role("button", name="Reject").click()
    await expect(modal.locator(".bk-error")).to_have_count(1)  # required, as Slack checks before sending
    await modal.locator("textarea").fill("wrong model for this week")
    await modal.get_by_role("button", name="Reject").click()  # view_submission
    await expect(modal).to_have_count(0)
    await expect(card).to_contain_text("Rejected by @bob")
    await expect(card).to_contain_text("wrong model for this week")

    await page.click("#app-home-link")  # app_home_opened; the bot answers with views.publish
    await expect(page.locator(".home-view")).to_be_visible()
    assert failures == [], failures


@pytest.mark.slow
@browser_test
async def test_fill_gaps_on_the_coverage_answer_posts_the_request_card(page: Page) -> None:
    """The bot's ephemeral buttons are live on the page, as in Slack: the click reaches the bot."""
    failures: list[str] = []
    page.on("pageerror", lambda exc: failures.append(str(exc)))
    await expect(page.locator("#live")).to_have_text("live")
    await page.select_option("#user-switcher", REQUESTER)
    composer = page.get_by_placeholder("Message #benchmarks")
    await composer.fill("/csb coverage csb_sdlc_fix --target 1")
    await composer.press("Enter")
    offer = page.locator("#messages .msg-ephemeral").filter(has=page.get_by_role("button", name="Fill gaps"))
    await offer.get_by_role("button", name="Fill gaps").click()
    card = page.locator("#messages .msg").filter(has=page.locator(".bk-header-text", has_text="#1"))
    await expect(card).to_contain_text("configs/harnesses/gap_fill_both_")
    await expect(page.locator("#messages .msg-ephemeral").last).to_contain_text("1 request for approval")
    assert failures == [], failures


# -- the page's routes, without a browser or a bot -------------------------------------------------------


async def serve_page(tmp_path: Path) -> tuple[str, SlackStandin, web.AppRunner]:
    """The stand-in and the page's routes on a free port, no bot behind them: files, feed and state."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    standin = SlackStandin(bot_token="xoxb-page-test", base_url=base)
    app = web.Application()
    standin.add_routes(app.router)
    PlaygroundRoutes(standin, make_settings(tmp_path, EXAMPLE_BENCH, f"{base}/api/"), base).add_routes(app)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return base, standin, runner


@pytest.fixture
async def standin_page(tmp_path: Path) -> AsyncIterator[tuple[str, SlackStandin]]:
    base, standin, runner = await serve_page(tmp_path)
    try:
        yield base, standin
    finally:
        await runner.cleanup()


@browser_test
async def test_pass_and_fail_look_different_without_an_emoji_font(
    standin_page: tuple[str, SlackStandin],
) -> None:
    """Drawn by the page, as Slack draws emoji as images: compared as pixels, so a machine whose fonts
    have no emoji (this test's Debian has none unless fonts-noto-color-emoji is installed) still shows
    ✅ and ❌ apart."""
    base, _ = standin_page
    said = {"user": REQUESTER, "channel": "C0PLAY", "text": ":white_check_mark: passed :x: failed"}
    async with aiohttp.ClientSession() as http, http.post(f"{base}/playground/message", json=said) as answer:
        assert answer.status == 200
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 860})
            await page.goto(f"{base}/")
            pictures = []
            for code in ("white_check_mark", "x"):
                emoji = page.locator(f'#messages .bk-emoji[title=":{code}:"]')
                await expect(emoji).to_have_count(1, timeout=PATIENCE)
                box = await emoji.bounding_box()
                assert box is not None and box["width"] >= 10 and box["height"] >= 10, box
                pictures.append(await emoji.screenshot())
            assert pictures[0] != pictures[1]
        finally:
            await browser.close()


async def test_page_and_its_files_are_served_and_load_nothing_from_outside(
    standin_page: tuple[str, SlackStandin],
) -> None:
    base, _ = standin_page
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/") as page:
            assert page.status == 200 and page.content_type == "text/html"
            html = await page.text()
        for name in ("app.css", "blockkit.js", "app.js"):
            assert f"/static/{name}" in html
            async with http.get(f"{base}/static/{name}") as file:
                assert file.status == 200
        for bad in ("missing.js", "..%2Froutes.py", ".hidden"):
            async with http.get(f"{base}/static/{bad}") as file:
                assert file.status == 404, bad
    for file in STATIC_DIR.iterdir():
        text = file.read_text()
        assert not re.search(r"(src|href|url)\(?=?[\"']?(https?:)?//", text), (
            f"{file.name} loads from outside"
        )


async def test_events_stream_each_change_and_end_at_shutdown(tmp_path: Path) -> None:
    base, _, runner = await serve_page(tmp_path)
    async with aiohttp.ClientSession() as http, http.get(f"{base}/playground/events") as stream:
        assert stream.content_type == "text/event-stream"
        assert b": connected" in await stream.content.readuntil(b"\n\n")
        said = {"user": REQUESTER, "channel": "C0PLAY", "text": "hello *there*"}
        async with http.post(f"{base}/playground/message", json=said) as answer:
            assert answer.status == 200
        kind, data = (await stream.content.readuntil(b"\n\n")).decode().strip().split("\n")
        assert kind == "event: message_posted"
        assert json.loads(data.removeprefix("data: "))["message"]["text"] == "hello *there*"
        # An open page must not hold the server's shutdown until its timeout.
        await asyncio.wait_for(runner.cleanup(), timeout=30)
        assert await stream.content.read() == b""


async def test_state_lists_open_modals_per_user_and_home_tabs(standin_page: tuple[str, SlackStandin]) -> None:
    base, standin = standin_page
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Why?"}, "blocks": []}
    home = {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}}]}
    auth = {"Authorization": "Bearer xoxb-page-test"}
    async with aiohttp.ClientSession(headers=auth) as http:
        opened = {"trigger_id": standin.issue_trigger_id(APPROVER), "view": modal}
        async with http.post(f"{base}/api/views.open", json=opened) as answer:
            view_id = (await answer.json())["view"]["id"]
        async with http.post(f"{base}/api/views.publish", json={"user_id": REQUESTER, "view": home}):
            pass
        async with http.get(f"{base}/playground/state") as answer:
            state = await answer.json()
        assert [v["id"] for v in state["views"][APPROVER]] == [view_id]
        assert state["homes"][REQUESTER]["blocks"][0]["text"]["text"] == "*hi*"
        assert {c["name"] for c in state["channel_list"]} >= {"benchmarks", "random"}
        assert {u["role"] for u in state["users"]} == {"requester", "approver", "admin", "outsider"}

        async with http.post(f"{base}/playground/view_close", json={"user": APPROVER, "view_id": view_id}):
            pass
        async with http.get(f"{base}/playground/state") as answer:
            assert (await answer.json())["views"] == {}
        missing = {"user": APPROVER, "view_id": "V0NONE", "values": {}}
        async with http.post(f"{base}/playground/view_submit", json=missing) as answer:
            assert answer.status == 400
