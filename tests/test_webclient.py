"""The bot's Web API client against the Slack stand-in's bad answers: a page instead of JSON is a
`MalformedAnswer`, a refusal stays Slack's error, a call that hangs times out; and the stand-in applies
each of these only to the method and channel it was asked to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from aiohttp.typedefs import Handler
from slack_sdk.errors import SlackApiError
from waiting import until

from bot.playground import SlackStandin
from bot.slack.outbound.webclient import CheckedWebClient, MalformedAnswer, web_client

TOKEN = "xoxb-webclient-test"


@pytest.fixture
async def served() -> AsyncIterator[tuple[SlackStandin, CheckedWebClient]]:
    standin = SlackStandin(bot_token=TOKEN)
    standin.add_channel("C0OTHER", "other")
    server = TestServer(standin.build_app(), host="127.0.0.1")
    await server.start_server()
    # A loaded machine must not time out an ordinary call; the hanging call gets its own short timeout.
    yield standin, web_client(TOKEN, str(server.make_url("/api/")), timeout=30.0)
    await server.close()


async def test_pages_instead_of_json_are_malformed_answers(
    served: tuple[SlackStandin, CheckedWebClient],
) -> None:
    standin, client = served
    for page in ("html", "text"):
        standin.answer_badly("chat.postMessage", page, after_store=False)
        with pytest.raises(MalformedAnswer):
            await client.chat_postMessage(channel="C0PLAY", text="lost")
    assert standin.messages("C0PLAY") == []
    standin.answer_badly("chat.postMessage", "no_ts", after_store=True)
    answer = await client.chat_postMessage(channel="C0PLAY", text="kept")
    assert answer["ok"] and answer.get("ts") is None
    assert [m["text"] for m in standin.messages("C0PLAY")] == ["kept"]


async def test_a_refusal_applies_to_its_channel_only_and_keeps_slacks_error(
    served: tuple[SlackStandin, CheckedWebClient],
) -> None:
    standin, client = served
    standin.refuse("chat.postMessage", "msg_too_long", channel="C0OTHER")
    assert (await client.chat_postMessage(channel="C0PLAY", text="here"))["ok"]
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C0OTHER", text="there")
    assert caught.value.response["error"] == "msg_too_long" and caught.value.response.status_code == 200
    assert (await client.chat_postMessage(channel="C0OTHER", text="again"))["ok"]


async def test_a_held_call_times_out_and_slack_still_does_the_work(
    served: tuple[SlackStandin, CheckedWebClient],
) -> None:
    standin, client = served
    impatient = web_client(TOKEN, client.base_url, timeout=1.0)
    hold = standin.hold("chat.postMessage", channel="C0PLAY")
    with pytest.raises(TimeoutError):
        await impatient.chat_postMessage(channel="C0PLAY", text="slow")
    assert hold.arrived.is_set() and standin.messages("C0PLAY") == []
    hold.release()
    await until(lambda: standin.messages("C0PLAY"), "the released call to store its post")
    assert [m["text"] for m in standin.messages("C0PLAY")] == ["slow"]


async def test_calls_share_one_connection_and_a_client_moves_to_another_loop() -> None:
    """The client keeps one pool in the loop it is called from: three calls, one connection; called from
    another event loop (its own thread) it opens a pool there, and back here one again."""
    standin = SlackStandin(bot_token=TOKEN)
    app = standin.build_app()
    peers: list[object] = []

    @web.middleware
    async def note_peer(request: web.Request, handler: Handler) -> web.StreamResponse:
        peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        return await handler(request)

    app.middlewares.append(note_peer)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    client = web_client(TOKEN, str(server.make_url("/api/")), timeout=30.0)
    try:
        for n in range(3):
            assert (await client.chat_postMessage(channel="C0PLAY", text=f"here {n}"))["ok"]
        assert len(peers) == 3 and len(set(peers)) == 1, peers

        async def elsewhere() -> bool:
            try:
                return bool((await client.chat_postMessage(channel="C0PLAY", text="there"))["ok"])
            finally:
                await client.close()

        assert await asyncio.to_thread(asyncio.run, elsewhere())
        assert (await client.chat_postMessage(channel="C0PLAY", text="back"))["ok"]
        assert [m["text"] for m in standin.messages("C0PLAY")][-2:] == ["there", "back"]
    finally:
        await client.close()
        await server.close()
    assert client.session is None
