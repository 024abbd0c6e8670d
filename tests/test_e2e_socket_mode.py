"""End to end over Socket Mode: the bot as a real process (`csb-bot serve` with SLACK_APP_TOKEN), the
Slack stand-in in the test delivering envelopes on the bot's WebSocket and receiving its Web API calls,
a real database (SQLite; the two-process test on PostgreSQL too) and the example bench's Harbor stand-in.

The same scenarios as over HTTP (run, Edit, Approve, lanes, report; Cancel through its modal), then what
only Socket Mode has: acks measured against Slack's 3 s, a `refresh_requested` disconnect and abrupt
drops mid-run that the bot recovers from by itself, envelopes sent again and acted on once, and two
bot processes sharing the envelopes of one app.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from bot_process import REPORT, BotProcess, World, every_lane_ran_once, world
from harness import CHANNEL, SECRET
from store_reads import request_count
from test_e2e_gate import prefilled_values
from test_e2e_run import card_text
from waiting import until

from bot.playground import APPROVER, REQUESTER, SlackDriver
from bot.playground.envelopes import CONNECTION_LOST, TIMEOUT
from bot.slack.views.cancel_modal import MODE_ACTION, MODE_BLOCK, REASON_ACTION, REASON_BLOCK
from bot.store import approvals

pytestmark = pytest.mark.slow

APP_TOKEN = "xapp-1-A0CSBBOT-1-socket-mode-test"
ACK_LIMIT_SECONDS = 3.0


@asynccontextmanager
async def socket_world(tmp_path: Path, db_url: str | None = None) -> AsyncIterator[World]:
    """test_restart's world of bot processes on one database (by default a SQLite file), with Socket
    Mode on for the app."""
    async with world(tmp_path, db_url or f"sqlite:///{tmp_path / 'bot.db'}") as w:
        w.standin.socket_mode.app_token = APP_TOKEN
        w.env["SLACK_APP_TOKEN"] = APP_TOKEN
        yield w


async def start_connected(w: World) -> BotProcess:
    """A bot process, once its WebSocket is open (each bot holds one connection)."""
    bot = await w.start_bot()
    await w.standin.socket_mode.wait_for_connections(len(w.bots))
    return bot


@asynccontextmanager
async def users(w: World) -> AsyncIterator[SlackDriver]:
    """People at their keyboards: what they do reaches the bot as envelopes, never as HTTP."""
    async with SlackDriver("", SECRET, w.standin, w.slack_url, socket_mode=True) as driver:
        yield driver


def cards(w: World) -> list[dict[str, Any]]:
    """Top-level posts that start a thread (a report sent to the channel too is not one)."""
    return [m for m in w.standin.messages(CHANNEL) if m.get("thread_ts", m["ts"]) == m["ts"]]


def card_with(w: World, label: str) -> dict[str, Any] | None:
    """The last card, once it shows the button `label`."""
    shown = cards(w)
    return shown[-1] if shown and f'"{label}"' in json.dumps(shown[-1]["blocks"]) else None


def reports(w: World, card: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in w.standin.thread(CHANNEL, card["ts"]) if REPORT.search(str(m))]


def acks_in_time(w: World) -> list[float]:
    """Every ack's delay (first send to ack); each is asserted under Slack's 3 s."""
    seconds = [ack.seconds for ack in w.standin.socket_mode.acks if ack.attempts == 1]
    assert seconds and max(seconds) < ACK_LIMIT_SECONDS, seconds
    return seconds


async def test_run_edit_approve_lanes_and_report_over_socket_mode(tmp_path: Path) -> None:
    async with socket_world(tmp_path) as w, users(w) as slack:
        await start_connected(w)
        answer = await slack.slash_command(REQUESTER, "run csb_sdlc_fix --parallel 2")
        assert answer.status == 200 and answer.ack_seconds is not None
        await until(lambda: card_with(w, "Edit"), "the approval card")
        card = cards(w)[-1]

        assert (await slack.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")).status == 200
        await until(lambda: w.standin.views, "the Edit modal")
        (view_id,) = w.standin.views
        values = prefilled_values(w.standin.views[view_id])
        values["edit.parallel"]["value"]["value"] = "4"
        assert (await slack.submit_view(REQUESTER, view_id, values)).status == 200
        await until(lambda: "parallel: 2 → 4" in card_text(cards(w)[-1]), "the card's second revision")

        card = cards(w)[-1]
        assert (await slack.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
        await until(w.finished, "the run to finish")
        await every_lane_ran_once(w)
        await until(lambda: reports(w, card), "the report in the card's thread")
        assert len(reports(w, card)) == 1 and len(cards(w)) == 1

        assert (await slack.app_home_opened(REQUESTER)).status == 200  # an events_api envelope
        await until(lambda: w.standin.home(REQUESTER), "the App Home tab")
        assert [d.type for d in w.standin.socket_mode.deliveries][-1] == "events_api"
        acks_in_time(w)
        assert all(d.retry_attempt == 0 for d in w.standin.socket_mode.deliveries)
        assert not w.standin.socket_mode.stray_acks


async def test_a_stopped_bot_closes_its_connection_and_exits_cleanly(tmp_path: Path) -> None:
    """SIGTERM (a deploy): the bot lets its ticks under way finish, closes its WebSocket with a close
    frame, so Slack sees it go at once, and exits 0 with no error or unclosed session in its log."""
    async with socket_world(tmp_path) as w:
        bot = await start_connected(w)
        await until(w.lease_pid, "the bot to take the timers")
        bot.proc.send_signal(signal.SIGTERM)
        await until(lambda: bot.proc.poll() is not None, "the bot to exit")
        assert bot.proc.returncode == 0
        assert w.standin.socket_mode.connections == []
        log = (w.tmp / "bot-0.log").read_text()
        for trouble in ("Traceback", "ERROR", "Unclosed"):
            assert trouble not in log, log


def cancel_values(reason: str) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        MODE_BLOCK: {MODE_ACTION: {"type": "radio_buttons", "selected_option": {"value": "cancel"}}},
        REASON_BLOCK: {REASON_ACTION: {"type": "plain_text_input", "value": reason}},
    }


async def test_cancel_through_its_modal_over_socket_mode(tmp_path: Path) -> None:
    async with socket_world(tmp_path) as w, users(w) as slack:
        hang = tmp_path / "standin-script.json"
        hang.write_text(json.dumps({task: "hang" for task in FIX_TASKS}))
        w.env["HARBOR_STANDIN_SCRIPT"] = str(hang)
        await start_connected(w)
        await slack.slash_command(REQUESTER, "run csb_sdlc_fix")
        await until(lambda: card_with(w, "Approve"), "the approval card")
        await slack.click_button(APPROVER, CHANNEL, cards(w)[-1]["ts"], "Approve")
        await until(_some_running(w), "lanes to run")
        await until(lambda: card_with(w, "Cancel"), "the status card")
        card = cards(w)[-1]
        assert (await slack.click_button(REQUESTER, CHANNEL, card["ts"], "Cancel")).status == 200
        await until(lambda: w.standin.views, "the Cancel modal")
        (view_id,) = w.standin.views
        assert (await slack.submit_view(REQUESTER, view_id, cancel_values("wrong model"))).status == 200
        assert view_id not in w.standin.views  # a plain ack closes the modal
        await until(lambda: _run_is(w, "cancelled"), "the run to be cancelled")
        await until(lambda: "wrong model" in str(w.standin.thread(CHANNEL, card["ts"])), "the note")
        acks_in_time(w)


FIX_TASKS = ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")


def _some_running(w: World) -> Any:
    async def check() -> bool:
        return "running" in await w.lane_states()

    return check


async def _run_is(w: World, state: str) -> bool:
    return await w.run_states() == [state]


async def test_refresh_and_drops_mid_run_lose_nothing_and_do_nothing_twice(tmp_path: Path) -> None:
    async with socket_world(tmp_path) as w, users(w) as slack:
        bot = await start_connected(w)
        socket = w.standin.socket_mode
        socket.lose_next_ack()  # the bot posts the card, its ack never arrives: Slack sends it again
        answer = await slack.slash_command(REQUESTER, "run csb_sdlc_fix --parallel 2")
        assert answer.status == 200 and socket.acks[-1].attempts == 2
        assert [d.retry_reason for d in socket.deliveries] == ["", TIMEOUT]
        await until(lambda: card_with(w, "Approve"), "the approval card")
        card = cards(w)[-1]
        socket.lose_next_ack()  # the click too: approved once, one run
        assert (await slack.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
        assert socket.acks[-1].attempts == 2
        await until(_some_running(w), "lanes to run")

        hellos = socket.hellos
        await socket.disconnect("refresh_requested")
        await until(lambda: socket.hellos > hellos, "the bot to open a new connection")
        assert (await slack.slash_command(REQUESTER, "status")).status == 200

        socket.drop_after_next_send()  # cut under the envelope: read or not, it comes again
        assert (await slack.slash_command(REQUESTER, "status")).status == 200
        assert socket.deliveries[-1].retry_reason == CONNECTION_LOST

        await until(w.finished, "the run to finish")
        await every_lane_ran_once(w)
        await until(lambda: reports(w, card), "the report in the card's thread")
        await until(lambda: len(_status_replies(w)) >= 2, "both status replies")
        assert len(_status_replies(w)) == 2, _status_replies(w)
        assert len(cards(w)) == 1 and len(reports(w, card)) == 1 and await request_count(w.store) == 1
        async with w.store.read() as session:
            assert await approvals.approvers(session, 1, 1) == [APPROVER]
        assert len(await w.run_states()) == 1
        assert bot.proc.poll() is None and len(w.bots) == 1  # the same process, reconnected by itself
        assert socket.hellos >= 3  # the first, after the refresh, after the drop
        acks_in_time(w)


def _status_replies(w: World) -> list[dict[str, Any]]:
    return [e for e in w.standin.ephemerals(REQUESTER) if "#1" in json.dumps(e)]


async def test_two_bots_each_holding_a_connection_handle_every_envelope_once(
    tmp_path: Path, db_url: str
) -> None:
    """On one SQLite file and on one PostgreSQL database: whichever process an envelope reaches, the
    request is made once, and an envelope sent again to the other process is acked, not acted on."""
    async with socket_world(tmp_path, db_url) as w, users(w) as slack:
        await asyncio.gather(w.start_bot(), w.start_bot())
        await w.standin.socket_mode.wait_for_connections(2)
        for _ in range(3):
            assert (await slack.slash_command(REQUESTER, "run csb_sdlc_fix")).status == 200
        w.standin.socket_mode.lose_next_ack()  # handled by one bot, sent again to the other
        assert (await slack.slash_command(REQUESTER, "run csb_sdlc_fix")).status == 200
        await until(lambda: len(cards(w)) >= 4, "four approval cards")
        await until(lambda: _all_have(w, "Approve"), "every card drawn")
        deliveries = w.standin.socket_mode.deliveries
        assert len({d.connection for d in deliveries}) == 2  # both processes took envelopes
        assert [d.retry_attempt for d in deliveries] == [0, 0, 0, 0, 1]
        assert deliveries[-1].connection != deliveries[-2].connection  # the retry went to the other bot
        assert await request_count(w.store) == 4 and len(cards(w)) == 4
        assert all(bot.proc.poll() is None for bot in w.bots)
        acks_in_time(w)


def _all_have(w: World, label: str) -> bool:
    return all(f'"{label}"' in json.dumps(card["blocks"]) for card in cards(w))


async def test_in_socket_mode_http_acts_on_nothing_and_what_http_refuses_is_acked_and_refused(
    tmp_path: Path,
) -> None:
    """One mode: a signed request to `POST /slack/events` is a 404 and makes nothing. An envelope HTTP
    would answer 400 or 413 (malformed, text longer than Slack sends, 3 MB) is acked at once, so Slack
    does not send it again, and not acted on; the next command is served as usual."""
    async with socket_world(tmp_path) as w, users(w) as slack:
        bot = await start_connected(w)
        async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as http:
            answer = await http.slash_command(REQUESTER, "run csb_sdlc_fix")
        assert answer.status == 404 and "over Socket Mode" in answer.body_text, answer.body_text

        command = {
            "command": "/csb",
            "user_id": REQUESTER,
            "channel_id": CHANNEL,
            "response_url": f"{w.slack_url}/nowhere",
        }
        refused = {
            "channel_id": {**command, "channel_id": 7, "text": "run csb_sdlc_fix"},
            "at most 40000 characters": {**command, "text": "run --model " + "x" * 40_000},
            "larger than Slack sends": {**command, "text": "run --model " + "x" * 3_000_000},
        }
        for number, payload in enumerate(refused.values()):
            ack = await w.standin.socket_mode.deliver(
                "slash_commands", {**payload, "trigger_id": f"t{number}"}
            )
            assert ack is not None and ack.attempts == 1, f"envelope {number} was not acked at once"

        assert (await slack.slash_command(REQUESTER, "help")).status == 200
        await until(lambda: w.standin.ephemerals(REQUESTER), "the answer to /csb help")
        assert len(w.standin.ephemerals(REQUESTER)) == 1
        assert await request_count(w.store) == 0 and cards(w) == []
        log = (w.tmp / "bot-0.log").read_text()
        for says in refused:
            assert says in log, log
        assert "Traceback" not in log
