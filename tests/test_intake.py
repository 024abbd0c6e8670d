"""Correctly signed requests with odd bodies or headers, sent the way Slack sends requests: each gets a
quick 400 (malformed) or 401 (unsigned), never a 500 and never Bolt's 3-second 404."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import aiohttp
import pytest
from harness import CHANNEL, Harness, running_bot

from bot.playground import APPROVER, REQUESTER, DriverResponse

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
# Bolt answers 404 after waiting 3 s for an ack that a failed listener never sent.
QUICK = 2.5


def form(payload: object) -> str:
    return urlencode({"payload": json.dumps(payload)})


async def timed(send: Awaitable[DriverResponse]) -> tuple[DriverResponse, float]:
    start = time.monotonic()
    response = await send
    return response, time.monotonic() - start


@pytest.mark.parametrize(
    ("body", "content_type", "says"),
    [
        ("payload=notjson", FORM, "does not parse"),
        ("payload=%5B%5D", FORM, "not a JSON object"),
        (form(5), FORM, "not a JSON object"),
        ("notjson", JSON, "does not parse"),
        ("[]", JSON, "not a JSON object"),
        ('{"a": ' * 5000 + "1" + "}" * 5000, JSON, "does not parse"),
        ("\xff".encode("latin-1").decode("latin-1"), "text/plain; charset=nope", "does not parse"),
        ("", FORM, "not a kind of request"),
        (form({}), FORM, "not a kind of request"),
        (form({"type": "shortcut"}), FORM, "not a kind of request"),
        ("command=%2Fcsb&text=help", FORM, "user_id: Field required; channel_id: Field required"),
        # Longer than Slack sends (a message's 40,000 characters): refused before anything parses it.
        (
            "command=%2Fcsb&user_id=U0A&channel_id=C0A&text=" + "x" * 40_001,
            FORM,
            "text: String should have at most 40000 characters",
        ),
        ("command=%2Fcsb&text=help&user_id=U0ALICE", FORM, "channel_id: Field required"),
        (form({"type": "block_actions", "user": {"id": "U0BOB"}}), FORM, "actions: Field required"),
        (form({"type": "block_actions", "user": {"id": "U0BOB"}, "actions": []}), FORM, "actions: List"),
        (form({"type": "block_actions", "user": "U0BOB", "actions": [{}]}), FORM, "user: Input should be"),
        (
            form({"type": "block_actions", "user": {"id": 7}, "actions": [{"action_id": "a"}]}),
            FORM,
            "user.id",
        ),
        (form({"type": "block_actions", "user": {"id": "U"}, "actions": "x"}), FORM, "actions: Input should"),
        (form({"type": "view_submission", "user": {"id": "U0BOB"}, "view": "x"}), FORM, "view: Input"),
        (form({"type": "view_submission", "user": {"id": "U0BOB"}, "view": {}}), FORM, "view.type"),
        (
            form(
                {
                    "type": "view_submission",
                    "user": {"id": "U0BOB"},
                    "view": {"type": "modal", "callback_id": "x", "state": {"values": {"b": "x"}}},
                }
            ),
            FORM,
            "view.state.values.b: Input should be a valid dictionary",
        ),
        (json.dumps({"type": "event_callback", "event": "x"}), JSON, "event: Input should be"),
        (json.dumps({"type": "event_callback", "event": {"type": "app_home_opened"}}), JSON, "event.user"),
        (json.dumps({"type": "event_callback", "team": 5, "event": {"type": "x"}}), JSON, "team"),
        (json.dumps({"type": "url_verification"}), JSON, "challenge: Field required"),
    ],
)
async def test_a_malformed_signed_payload_is_a_quick_400_naming_the_field(
    tmp_path: Path, body: str, content_type: str, says: str
) -> None:
    async with running_bot(tmp_path) as h:
        response, elapsed = await timed(h.driver.post(body, content_type))
        assert response.status == 400, response.body_text
        assert says in response.json["error"]
        assert elapsed < QUICK


@pytest.mark.parametrize(
    ("callback_id", "metadata"),
    [
        ("approval.edit_modal", ""),
        ("approval.edit_modal", "7"),
        ("approval.edit_modal", "7:x"),
        ("approval.reject_modal", "x:1"),
        ("approval.reject_modal", "9" * 40 + ":1"),
        ("run.cancel_modal", "1:1"),
        ("run.cancel_modal", "9" * 40),
    ],
)
async def test_a_modal_submit_with_metadata_no_modal_of_the_app_holds_is_a_quick_400(
    tmp_path: Path, callback_id: str, metadata: str
) -> None:
    """Slack hands `private_metadata` back as the app set it; anything else is forged or corrupt."""
    view = {"type": "modal", "callback_id": callback_id, "private_metadata": metadata}
    async with running_bot(tmp_path) as h:
        body = form({"type": "view_submission", "user": {"id": APPROVER}, "view": view})
        response, elapsed = await timed(h.driver.post(body, FORM))
        assert response.status == 400, response.body_text
        assert response.json["error"].endswith("view.private_metadata: not what this app's modal holds there")
        assert elapsed < QUICK


@pytest.mark.parametrize("stamp", ["abc", "1e400", "１７００００００００", "-5", " 1", "9" * 40, ""])
async def test_a_timestamp_that_is_not_unix_seconds_is_refused_as_unsigned(
    tmp_path: Path, stamp: str
) -> None:
    async with running_bot(tmp_path) as h:
        body = "command=%2Fcsb&text=help&user_id=U0ALICE&channel_id=C0PLAY"
        response = await h.driver.post(body, FORM, headers={"X-Slack-Request-Timestamp": stamp})
        assert response.status == 401
        assert response.json == {"error": "invalid request"}


async def test_a_malformed_body_without_a_valid_signature_is_401_not_400(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        response = await h.driver.post("payload=notjson", FORM, signature="v0=00")
        assert response.status == 401


async def test_a_body_that_is_not_utf8_is_a_400_and_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Slack sends UTF-8; anything else, signed or not, is refused before the signature is computed."""
    async with running_bot(tmp_path) as h:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            async with aiohttp.ClientSession() as session:
                headers = {
                    "Content-Type": FORM,
                    "X-Slack-Request-Timestamp": str(int(time.time())),
                    "X-Slack-Signature": "v0=00",
                }
                async with session.post(h.driver.bot_url, data=b"text=\xff\xfe", headers=headers) as answer:
                    status, error = answer.status, (await answer.json())["error"]
        assert (status, error) == (400, "the body is not UTF-8")
        records = [r for r in caplog.records if r.name.startswith(("bot", "aiohttp.server", "aiohttp.web"))]
        assert [r.getMessage() for r in records] == ["refused a request whose body is not UTF-8 (7 bytes)"]
        assert all(r.exc_info is None for r in records)


async def test_a_body_over_one_mib_is_413_whatever_it_holds(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        response, elapsed = await timed(h.driver.post("text=" + "x" * (2 * 1024 * 1024), FORM))
        assert response.status == 413
        assert elapsed < QUICK


# -- every field of real payloads dropped or given another type -------------------------------------------

DROP = object()
OTHER_TYPES: tuple[object, ...] = (DROP, 7, "x", [], {})
SKIP = {"blocks", "state"}  # what Slack draws; neither Bolt nor the listeners read it


def mutations(body: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(path, body with that one field dropped or replaced) for every field down to depth 4."""
    if len(path) >= 4:
        return
    items: list[tuple[str | int, Any]] = []
    if isinstance(body, dict):
        items = [(k, v) for k, v in body.items() if k not in SKIP]
    elif isinstance(body, list) and body:
        items = [(0, body[0])]
    for key, value in items:
        for other in OTHER_TYPES:
            if type(other) is type(value) or (other is DROP and isinstance(body, list)):
                continue
            yield (*path, key), _replace(body, key, other)
        for inner_path, inner in mutations(value, (*path, key)):
            yield inner_path, _replace(body, key, inner)


def _replace(body: Any, key: str | int, value: object) -> Any:
    if isinstance(body, dict):
        copy = dict(body)
        if value is DROP:
            del copy[key]
        else:
            copy[key] = value
        return copy
    return [value, *body[1:]]


def _at(body: Any, path: tuple[str | int, ...]) -> object:
    for key in path:
        if isinstance(body, dict) and key not in body:
            return DROP
        body = body[key]
    return body


def encode(original: str, content_type: str, mutated: dict[str, Any]) -> str:
    if content_type == JSON:
        return json.dumps(mutated)
    if original.startswith("payload="):
        return form(mutated)
    return urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in mutated.items()})


def decode(body: str, content_type: str) -> dict[str, Any]:
    if content_type == JSON:
        return dict(json.loads(body))
    fields = dict(parse_qsl(body, keep_blank_values=True))
    return dict(json.loads(fields["payload"])) if "payload" in fields else fields


async def record_real_requests(h: Harness) -> list[tuple[str, str]]:
    """A slash command, a click on Edit and Reject, a modal submit and App Home, as the driver sends them."""
    sent: list[tuple[str, str]] = []
    post: Callable[..., Awaitable[DriverResponse]] = h.driver.post

    async def recording(body: str, content_type: str, **kwargs: Any) -> DriverResponse:
        sent.append((body, content_type))
        return await post(body, content_type, **kwargs)

    h.driver.post = recording  # type: ignore[method-assign]
    await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
    await h.deliver()
    card = h.last_card()
    await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Reject")
    await h.deliver()
    (view_id,) = h.standin.views
    await h.driver.submit_view(APPROVER, view_id, {})
    await h.driver.app_home_opened(REQUESTER)
    h.driver.post = post  # type: ignore[method-assign]
    return sent


@pytest.mark.slow
async def test_no_field_of_a_real_payload_dropped_or_retyped_gives_a_500_or_a_slow_answer(
    tmp_path: Path,
) -> None:
    async with running_bot(tmp_path) as h:
        real = await record_real_requests(h)
        assert len(real) >= 4
        failures: list[str] = []
        for body, content_type in real:
            for path, mutated in mutations(decode(body, content_type)):
                response, elapsed = await timed(
                    h.driver.post(encode(body, content_type, mutated), content_type)
                )
                if response.status == 500 or elapsed >= QUICK:
                    shown = "dropped" if _at(mutated, path) is DROP else repr(_at(mutated, path))
                    failures.append(
                        f"{'.'.join(map(str, path))} {shown}: {response.status} in {elapsed:.1f} s"
                    )
        await h.deliver()
        assert failures == [], "\n".join(failures)


@pytest.mark.parametrize("value", ["²", "9" * 40, "-1", " 1"])
async def test_a_button_value_that_is_no_row_id_gets_the_stale_button_reply(
    tmp_path: Path, value: str
) -> None:
    async with running_bot(tmp_path) as h:
        real = await record_real_requests(h)
        click = next(decode(body, FORM) for body, _kind in real if "block_actions" in body)
        click["actions"][0]["value"] = value
        click["actions"][0]["action_ts"] = (
            "1700000000.000001"  # a new click, not a replay of the recorded one
        )
        before = len(h.ephemeral_texts(APPROVER))
        response, elapsed = await timed(h.driver.post(form(click), FORM))
        assert response.status == 200 and elapsed < QUICK
        await h.deliver()
        assert h.ephemeral_texts(APPROVER)[before:] == ["this button is not valid any more"]
