"""The playground's Slack stand-in and driver, driven the way the bot drives them: over loopback HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

import bot.playground as playground
from bot.playground import (
    ADMIN,
    APPROVER,
    OUTSIDER,
    REQUESTER,
    ButtonNotFound,
    SlackDriver,
    SlackStandin,
    check_message_blocks,
    check_view,
    message_text_too_long,
)

TOKEN = "xoxb-playground-test"
SECRET = "playground-signing-secret"
CARD_META = {"event_type": "csb_card", "event_payload": {"outbox_key": "req-1"}}


@dataclass
class Served:
    standin: SlackStandin
    url: str

    def client(self, token: str = TOKEN, **kwargs: Any) -> AsyncWebClient:
        return AsyncWebClient(token=token, base_url=f"{self.url}/api/", **kwargs)


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    standin = SlackStandin(bot_token=TOKEN)
    server = TestServer(standin.build_app(), host="127.0.0.1")
    await server.start_server()
    url = str(server.make_url("")).rstrip("/")
    standin.base_url = url
    yield Served(standin, url)
    await server.close()


def section(text: str, block_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    if block_id:
        block["block_id"] = block_id
    return block


def button(label: str, action_id: str, value: str) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action_id,
        "value": value,
    }


CARD = [
    section("*claude* on `swe-bench`: 12 tasks", "summary"),
    {
        "type": "actions",
        "block_id": "decide",
        "elements": [button("Approve", "approval.approve", "7"), button("Reject", "approval.reject", "7")],
    },
]


def test_exports_are_pinned() -> None:
    assert set(playground.__all__) == {
        "ADMIN",
        "APPROVER",
        "CAST",
        "DEFAULT_CHANNELS",
        "OUTSIDER",
        "REQUESTER",
        "ApiError",
        "Button",
        "ButtonNotFound",
        "Channel",
        "DriverResponse",
        "PlayUser",
        "RecordedCall",
        "SlackDriver",
        "SlackStandin",
        "buttons",
        "check_message_blocks",
        "check_view",
        "message_text_too_long",
        "slack_signature",
    }


# -- Block Kit limits (pure) ----------------------------------------------------------------------------


def test_a_card_within_limits_passes() -> None:
    assert check_message_blocks(CARD) == []
    assert check_message_blocks([{"type": "divider"}] * 50) == []


@pytest.mark.parametrize(
    ("blocks", "pointer"),
    [
        ([{"type": "divider"}] * 51, "/blocks"),
        ([section("x" * 3001)], "/blocks/0/text/text"),
        ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}], "/blocks/0/fields"),
        (
            [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 2001}]}],
            "/blocks/0/fields/0/text",
        ),
        ([{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}], "/blocks/0/text/text"),
        ([{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}], "/blocks/0/text/type"),
        ([{"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11}], "/blocks/0/elements"),
        ([{"type": "actions", "elements": [button("b", "a", "v")] * 26}], "/blocks/0/elements"),
        ([{"type": "actions", "elements": [button("b" * 76, "a", "v")]}], "/blocks/0/elements/0/text/text"),
        ([{"type": "actions", "elements": [button("b", "a" * 256, "v")]}], "/blocks/0/elements/0/action_id"),
        ([{"type": "actions", "elements": [button("b", "a", "v" * 2001)]}], "/blocks/0/elements/0/value"),
        ([section("s", "i" * 256)], "/blocks/0/block_id"),
        ([section("s", "same"), section("t", "same")], "/blocks/1/block_id"),
        ([{"type": "sectoin", "text": {"type": "mrkdwn", "text": "s"}}], "/blocks/0/type"),
        ([{"text": {"type": "mrkdwn", "text": "s"}}], "/blocks/0/type"),
        ([{"type": "section"}], "/blocks/0"),
        ("not a list", "/blocks"),
    ],
)
def test_each_message_limit_is_reported_with_its_pointer(blocks: Any, pointer: str) -> None:
    errors = check_message_blocks(blocks)
    assert any(e.endswith(f"[json-pointer:{pointer}]") for e in errors), errors


def test_message_text_limit_is_separate_from_blocks() -> None:
    assert not message_text_too_long("t" * 40_000)
    assert message_text_too_long("t" * 40_001)


def modal(title: str = "Edit run", blocks: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": title},
        "blocks": blocks if blocks is not None else [section("hello")],
        **extra,
    }


def test_view_limits() -> None:
    plain = {"type": "plain_text", "text": "s" * 25}
    text_input = {
        "type": "input",
        "block_id": "model",
        "label": {"type": "plain_text", "text": "Model"},
        "element": {"type": "plain_text_input", "action_id": "model_input"},
    }
    assert check_view(modal(blocks=[{"type": "divider"}] * 100)) == []
    assert check_view({"type": "home", "blocks": [{"type": "divider"}] * 100}) == []
    assert check_view(modal(blocks=[{"type": "divider"}] * 101))
    assert any("/view/title/text" in e for e in check_view(modal(title="t" * 25)))
    assert any("/view/submit/text" in e for e in check_view(modal(submit=plain)))
    assert any("/view/close/text" in e for e in check_view(modal(close=plain)))
    assert any("/view/submit" in e for e in check_view(modal(blocks=[text_input])))
    assert any("/view/type" in e for e in check_view({"type": "page", "blocks": []}))


# -- Web API over loopback ------------------------------------------------------------------------------


async def test_auth_test_and_users_info(served: Served) -> None:
    client = served.client()
    auth = await client.auth_test()
    assert (auth["team_id"], auth["user_id"], auth["bot_id"]) == ("T0PLAY", "UCSBBOT", "B0CSBBOT")
    alice = await client.users_info(user=REQUESTER)
    assert alice["user"]["name"] == "alice"
    assert alice["user"]["profile"]["display_name"] == "alice"
    assert alice["user"]["tz"]
    for user, name in [(APPROVER, "bob"), (ADMIN, "carol"), (OUTSIDER, "dave")]:
        assert (await client.users_info(user=user))["user"]["real_name"].lower().startswith(name)
    with pytest.raises(SlackApiError) as caught:
        await client.users_info(user="U0NOBODY")
    assert caught.value.response["error"] == "user_not_found"


async def test_wrong_token_is_invalid_auth_with_http_200(served: Served) -> None:
    with pytest.raises(SlackApiError) as caught:
        await served.client(token="xoxb-wrong").chat_postMessage(channel="C0PLAY", text="hi")
    assert caught.value.response.status_code == 200
    assert caught.value.response["error"] == "invalid_auth"
    assert served.standin.messages("C0PLAY") == []
    assert served.standin.calls_to("chat.postMessage")[0].error == "invalid_auth"


async def test_form_body_with_token_field_and_unknown_method(served: Served) -> None:
    async with aiohttp.ClientSession() as session:
        form = {"token": TOKEN, "users": REQUESTER}
        async with session.post(f"{served.url}/api/conversations.open", data=form) as answer:
            assert (await answer.json())["channel"]["id"] == "D0ALICE"
        async with session.post(f"{served.url}/api/files.upload", data={"token": TOKEN}) as answer:
            assert answer.status == 200
            assert await answer.json() == {"ok": False, "error": "unknown_method"}


async def test_post_update_thread_replies_history_with_metadata(served: Served) -> None:
    client, standin = served.client(), served.standin
    card = await client.chat_postMessage(
        channel="C0PLAY", text="run request", blocks=CARD, metadata=CARD_META
    )
    reply = await client.chat_postMessage(
        channel="C0PLAY", text="lane 1 started", thread_ts=card["ts"], metadata=CARD_META
    )
    broadcast = await client.chat_postMessage(
        channel="C0PLAY", text="report", thread_ts=card["ts"], reply_broadcast=True
    )
    assert card["ts"] < reply["ts"] < broadcast["ts"]
    assert card["channel"] == "C0PLAY" and card["message"]["blocks"][0]["block_id"] == "summary"

    await client.chat_update(channel="C0PLAY", ts=card["ts"], text="approved", blocks=[section("Approved")])
    assert [m["text"] for m in standin.messages("C0PLAY")] == ["approved", "report"]
    assert standin.messages("C0PLAY")[0]["metadata"] == CARD_META
    assert [m["text"] for m in standin.thread("C0PLAY", card["ts"])] == ["lane 1 started", "report"]

    replies = await client.conversations_replies(channel="C0PLAY", ts=card["ts"], include_all_metadata=True)
    assert [m["ts"] for m in replies["messages"]] == [card["ts"], reply["ts"], broadcast["ts"]]
    assert replies["messages"][0]["reply_count"] == 2
    assert replies["messages"][1]["metadata"]["event_payload"] == {"outbox_key": "req-1"}
    plain = await client.conversations_replies(channel="C0PLAY", ts=card["ts"])
    assert all("metadata" not in m for m in plain["messages"])

    history = await client.conversations_history(channel="C0PLAY", limit=1, include_all_metadata=True)
    assert [m["ts"] for m in history["messages"]] == [broadcast["ts"]]
    assert history["has_more"] is True
    rest = await client.conversations_history(
        channel="C0PLAY", cursor=history["response_metadata"]["next_cursor"], include_all_metadata=True
    )
    assert [m["metadata"] for m in rest["messages"]] == [CARD_META]


async def test_update_and_delete_of_unknown_message(served: Served) -> None:
    client = served.client()
    for call in (
        client.chat_update(channel="C0PLAY", ts="1.000001", text="x"),
        client.chat_delete(channel="C0PLAY", ts="1.000001"),
    ):
        with pytest.raises(SlackApiError) as caught:
            await call
        assert caught.value.response["error"] == "message_not_found"
    posted = await client.chat_postMessage(channel="C0PLAY", text="bye")
    await client.chat_delete(channel="C0PLAY", ts=posted["ts"])
    assert served.standin.messages("C0PLAY") == []


async def test_channel_membership(served: Served) -> None:
    client, standin = served.client(), served.standin
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C0NOBOT", text="hi")
    assert caught.value.response["error"] == "not_in_channel"
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C0MISSING", text="hi")
    assert caught.value.response["error"] == "channel_not_found"
    standin.add_channel("C0EVALS", "evals", bot_member=True)
    await client.chat_postMessage(channel="C0EVALS", text="hi")
    dm = await client.conversations_open(users=REQUESTER)
    await client.chat_postMessage(channel=REQUESTER, text="your run finished")
    assert [m["text"] for m in standin.messages(dm["channel"]["id"])] == ["your run finished"]


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing:UserWarning")
async def test_invalid_blocks_and_msg_too_long(served: Served) -> None:
    client = served.client()
    cases = [
        ({"text": "t", "blocks": [{"type": "divider"}] * 51}, "invalid_blocks"),
        ({"text": "t", "blocks": [section("x" * 3001)]}, "invalid_blocks"),
        ({"text": "t" * 40_001}, "msg_too_long"),
        ({}, "no_text"),
    ]
    for kwargs, error in cases:
        with pytest.raises(SlackApiError) as caught:
            await client.chat_postMessage(channel="C0PLAY", **kwargs)
        assert caught.value.response["error"] == error
    assert caught.value.response.get("errors") is None
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C0PLAY", text="t", blocks=[section("x" * 3001)])
    assert caught.value.response["errors"] == [
        "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
    ]
    assert served.standin.messages("C0PLAY") == []


async def test_rate_limit_is_retried_by_slack_sdk_handler(served: Served) -> None:
    standin = served.standin
    standin.inject_failure("chat.postMessage", status=429, count=1, retry_after=0)
    retrying = served.client(retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    posted = await retrying.chat_postMessage(channel="C0PLAY", text="after a 429")
    assert posted["ok"]
    assert [(c.ok, c.error) for c in standin.calls_to("chat.postMessage")] == [
        (False, "ratelimited"),
        (True, None),
    ]

    standin.inject_failure("chat.update", status=429, retry_after=7)
    with pytest.raises(SlackApiError) as caught:
        await served.client().chat_update(channel="C0PLAY", ts=posted["ts"], text="edited")
    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == "7"
    assert standin.messages("C0PLAY")[0]["text"] == "after a 429"


async def test_server_errors_before_and_after_store(served: Served) -> None:
    client, standin = served.client(), served.standin
    standin.inject_failure("chat.postMessage", status=500)
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C0PLAY", text="lost")
    assert caught.value.response.status_code == 500
    assert standin.messages("C0PLAY") == []

    standin.inject_failure("chat.postMessage", status=503, after_store=True)
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C0PLAY", text="stored", metadata=CARD_META)
    assert caught.value.response.status_code == 503
    history = await client.conversations_history(channel="C0PLAY", include_all_metadata=True)
    assert [m["metadata"]["event_payload"]["outbox_key"] for m in history["messages"]] == ["req-1"]
    with pytest.raises(ValueError):
        standin.inject_failure("chat.postMessage", status=429, after_store=True)


async def test_views_open_update_and_home(served: Served) -> None:
    client, standin = served.client(), served.standin
    trigger = standin.issue_trigger_id(REQUESTER)
    opened = await client.views_open(trigger_id=trigger, view=modal(callback_id="edit", private_metadata="7"))
    view_id = opened["view"]["id"]
    assert view_id.startswith("V") and standin.views[view_id]["callback_id"] == "edit"
    with pytest.raises(SlackApiError) as caught:
        await client.views_open(trigger_id=trigger, view=modal())
    assert caught.value.response["error"] == "exchanged_trigger_id"
    with pytest.raises(SlackApiError) as caught:
        await client.views_open(trigger_id=standin.issue_trigger_id(REQUESTER), view=modal(title="t" * 25))
    assert caught.value.response["error"] == "invalid_blocks"

    await client.views_update(view_id=view_id, view=modal(title="Edited"), hash=opened["view"]["hash"])
    assert standin.views[view_id]["title"]["text"] == "Edited"
    with pytest.raises(SlackApiError) as caught:
        await client.views_update(view_id=view_id, view=modal(), hash=opened["view"]["hash"])
    assert caught.value.response["error"] == "hash_conflict"

    await client.views_publish(user_id=APPROVER, view={"type": "home", "blocks": [section("Your runs")]})
    home = standin.home(APPROVER)
    assert home is not None and home["blocks"][0]["text"]["text"] == "Your runs"
    assert standin.home(REQUESTER) is None


async def test_response_url_ephemeral_in_channel_and_replace(served: Served) -> None:
    standin = served.standin
    ephemeral = await AsyncWebhookClient(standin.response_url("C0NOBOT", REQUESTER)).send(
        text="invite @csb to this channel first"
    )
    assert (ephemeral.status_code, ephemeral.body) == (200, "ok")
    assert [e["text"] for e in standin.ephemerals(REQUESTER)] == ["invite @csb to this channel first"]
    assert standin.ephemerals(APPROVER) == []

    await AsyncWebhookClient(standin.response_url("C0PLAY", REQUESTER)).send(
        text="posted for all", response_type="in_channel"
    )
    card = standin.messages("C0PLAY")[0]
    assert card["text"] == "posted for all" and card["user"] == "UCSBBOT"

    replace = AsyncWebhookClient(standin.response_url("C0PLAY", APPROVER, card["ts"]))
    await replace.send(text="approved by bob", replace_original=True)
    assert [m["text"] for m in standin.messages("C0PLAY")] == ["approved by bob"]
    assert [c.ok for c in standin.calls_to("response_url")] == [True, True, True]

    bogus = await AsyncWebhookClient(f"{served.url}/response/nope").send(text="x")
    assert bogus.status_code == 404


async def test_change_events_reach_subscribers(served: Served) -> None:
    queue = served.standin.subscribe()
    client = served.client()
    posted = await client.chat_postMessage(channel="C0PLAY", text="hi")
    await client.chat_update(channel="C0PLAY", ts=posted["ts"], text="hello")
    await client.chat_postEphemeral(channel="C0PLAY", user=REQUESTER, text="psst")
    kinds = [queue.get_nowait()["kind"] for _ in range(queue.qsize())]
    assert kinds == ["message_posted", "message_updated", "ephemeral"]
    served.standin.unsubscribe(queue)


# -- driver -----------------------------------------------------------------------------------------------


class Receiver:
    """A bot stand-in for the driver tests: verifies signatures with slack_sdk and keeps the payloads."""

    def __init__(self) -> None:
        self.verifier = SignatureVerifier(SECRET)
        self.received: list[dict[str, Any]] = []
        self.reply: dict[str, Any] | None = None

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.text()
        if not self.verifier.is_valid_request(raw, dict(request.headers)):
            return web.Response(status=401, text="invalid signature")
        if request.content_type == "application/json":
            body = json.loads(raw)
        else:
            form = dict(parse_qsl(raw, keep_blank_values=True))
            body = json.loads(form["payload"]) if "payload" in form else form
        self.received.append(body)
        return web.json_response(self.reply) if self.reply is not None else web.Response(text="")


@dataclass
class Bench:
    served: Served
    receiver: Receiver
    bot_url: str

    def driver(self, **kwargs: Any) -> SlackDriver:
        return SlackDriver(self.bot_url, SECRET, self.served.standin, self.served.url, **kwargs)


@pytest.fixture
async def bench(served: Served) -> AsyncIterator[Bench]:
    receiver = Receiver()
    app = web.Application()
    app.router.add_post("/slack/events", receiver.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield Bench(served, receiver, str(server.make_url("/slack/events")))
    await server.close()


async def test_slash_command_carries_every_field(bench: Bench) -> None:
    async with bench.driver() as driver:
        answer = await driver.slash_command(REQUESTER, "run --model claude")
    assert answer.status == 200
    form = bench.receiver.received[0]
    assert form["command"] == "/csb" and form["text"] == "run --model claude"
    assert (form["user_id"], form["user_name"]) == (REQUESTER, "alice")
    assert (form["channel_id"], form["channel_name"], form["team_id"]) == ("C0PLAY", "benchmarks", "T0PLAY")
    assert set(form) >= {"token", "team_domain", "api_app_id", "trigger_id", "response_url"}
    assert form["response_url"].startswith(f"{bench.served.url}/response/")


async def test_click_button_sends_block_actions_from_stored_card(bench: Bench) -> None:
    client, standin = bench.served.client(), bench.served.standin
    card = await client.chat_postMessage(channel="C0PLAY", text="approve?", blocks=CARD, metadata=CARD_META)
    async with bench.driver() as driver:
        await driver.click_button(APPROVER, "C0PLAY", card["ts"], "Approve")
        with pytest.raises(ButtonNotFound, match="Approve"):
            await driver.click_button(APPROVER, "C0PLAY", card["ts"], "Cancel")
    payload = bench.receiver.received[0]
    assert payload["type"] == "block_actions"
    assert payload["user"] == {"id": APPROVER, "username": "bob", "name": "bob", "team_id": "T0PLAY"}
    assert payload["container"] == {
        "type": "message",
        "message_ts": card["ts"],
        "channel_id": "C0PLAY",
        "is_ephemeral": False,
    }
    assert payload["channel"] == {"id": "C0PLAY", "name": "benchmarks"}
    assert (
        payload["message"]["ts"] == card["ts"]
        and payload["message"]["blocks"] == standin.messages("C0PLAY")[0]["blocks"]
    )
    [action] = payload["actions"]
    assert (action["action_id"], action["block_id"], action["value"]) == ("approval.approve", "decide", "7")
    assert action["type"] == "button" and action["text"] == {
        "type": "plain_text",
        "text": "Approve",
        "emoji": True,
    }
    assert payload["trigger_id"] and payload["response_url"] and payload["team"]["id"] == "T0PLAY"

    reply = await AsyncWebhookClient(payload["response_url"]).send(text="Approved", replace_original=True)
    assert reply.status_code == 200 and standin.messages("C0PLAY")[0]["text"] == "Approved"


async def test_stale_or_forged_requests_are_rejected_by_the_verifier(bench: Bench) -> None:
    async with bench.driver(time_fn=lambda: 1_000_000_000.0) as stale:
        assert (await stale.slash_command(REQUESTER, "help")).status == 401
    async with bench.driver() as driver:
        forged = await driver.post(
            "text=help", "application/x-www-form-urlencoded", signature="v0=" + "0" * 64
        )
        assert forged.status == 401
        assert (await driver.slash_command(REQUESTER, "help")).status == 200
    assert len(bench.receiver.received) == 1


async def test_submit_view_and_app_home_opened(bench: Bench) -> None:
    client, standin = bench.served.client(), bench.served.standin
    text_input = {
        "type": "input",
        "block_id": "model",
        "label": {"type": "plain_text", "text": "Model"},
        "element": {"type": "plain_text_input", "action_id": "model_input"},
    }
    submit = {"type": "plain_text", "text": "Save"}
    trigger = standin.issue_trigger_id(REQUESTER)
    view = modal(blocks=[text_input], submit=submit, callback_id="edit_run", private_metadata="7")
    view_id = (await client.views_open(trigger_id=trigger, view=view))["view"]["id"]
    values = {"model": {"model_input": {"type": "plain_text_input", "value": "claude"}}}
    async with bench.driver() as driver:
        with pytest.raises(KeyError, match="model"):
            await driver.submit_view(REQUESTER, view_id, {"modle": {}})
        bench.receiver.reply = {"response_action": "errors", "errors": {"model": "unknown model"}}
        await driver.submit_view(REQUESTER, view_id, values)
        assert view_id in standin.views
        bench.receiver.reply = None
        await driver.submit_view(REQUESTER, view_id, values)
        assert view_id not in standin.views
        await client.views_publish(user_id=REQUESTER, view={"type": "home", "blocks": [section("Runs")]})
        await driver.app_home_opened(REQUESTER)
    submission = bench.receiver.received[0]
    assert submission["type"] == "view_submission"
    assert submission["view"]["callback_id"] == "edit_run" and submission["view"]["private_metadata"] == "7"
    assert submission["view"]["state"]["values"] == values
    assert submission["view"]["id"] == view_id and submission["view"]["hash"]
    event = bench.receiver.received[-1]
    assert event["type"] == "event_callback" and event["team_id"] == "T0PLAY"
    assert event["event"]["type"] == "app_home_opened"
    assert (event["event"]["user"], event["event"]["channel"], event["event"]["tab"]) == (
        REQUESTER,
        "D0ALICE",
        "home",
    )
    assert event["event"]["view"]["blocks"][0]["text"]["text"] == "Runs"
