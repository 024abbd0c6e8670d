"""A request to POST /slack/events, looked at before Bolt sees it: the timestamp is a number, the
signature holds, the body parses, and the fields Bolt and the listeners read are there with Slack's
types. Anything else is answered at once, 401 unsigned or 400 malformed, instead of a 500 from deep
inside Bolt or a listener that fails before its ack and leaves Slack waiting 3 s for a 404.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field, StrictBool, StrictStr, ValidationError
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import (
    build_normalized_headers,
    extract_content_type,
    parse_body,
    parse_query,
)
from slack_sdk.signature import SignatureVerifier

from bot.domain.limits import COMMAND_TEXT_CHARS
from bot.slack.ids import CallbackId

log = logging.getLogger(__name__)

# The most a request from Slack holds (aiohttp's default `client_max_size`, answered 413 over HTTP): a
# command's 40,000 characters, each up to 9 bytes form-encoded, fit with room to spare.
MAX_BODY_BYTES = 1024 * 1024

_TIMESTAMP = re.compile(r"[0-9]{1,12}")  # Unix seconds; Bolt's int() would also take "１２" or "+1_0"
# What this app's modals put in `private_metadata` (slack/views/*_modal.py) and Slack hands back as it
# was: row ids that fit a 64-bit integer, and a revision. Anything else was not made by this app.
_REVISION_OF_ID = re.compile(r"[0-9]{1,18}:[0-9]{1,9}")
_METADATA = {
    CallbackId.EDIT.value: _REVISION_OF_ID,
    CallbackId.REJECT.value: _REVISION_OF_ID,
    CallbackId.CANCEL.value: re.compile(r"[0-9]{1,18}"),
}


class _Ref(BaseModel):
    """`user`, `channel`, `team`, `enterprise` as objects: Bolt reads their `id`."""

    id: StrictStr | None = None


_RefOrId = _Ref | StrictStr | None


class _Authorization(BaseModel):
    enterprise_id: StrictStr | None = None
    team_id: StrictStr | None = None
    user_id: StrictStr | None = None
    is_enterprise_install: StrictBool | None = None


class _Nested(BaseModel):
    """A message or item inside a payload: Bolt looks into it for a user, channel and thread."""

    user: _RefOrId = None
    channel: _RefOrId = None
    thread_ts: StrictStr | None = None


class _AnyView(BaseModel):
    """A view in a payload that is not its submission (a click on the App Home tab or in a modal)."""

    type: StrictStr | None = None
    callback_id: StrictStr | None = None
    app_installed_team_id: StrictStr | None = None
    team_id: StrictStr | None = None


class _Envelope(BaseModel):
    """What Bolt reads from any payload (`build_context`, the listener matchers), typed as Slack sends it."""

    type: StrictStr | None = None
    user: _RefOrId = None
    channel: _RefOrId = None
    team: _RefOrId = None
    enterprise: _RefOrId = None
    user_id: StrictStr | None = None
    channel_id: StrictStr | None = None
    team_id: StrictStr | None = None
    enterprise_id: StrictStr | None = None
    authorizations: list[_Authorization] | None = None
    is_ext_shared_channel: StrictBool | None = None
    message: _Nested | None = None
    view: _AnyView | None = None
    response_url: StrictStr | None = None
    response_urls: list[dict[str, StrictStr]] | None = None
    trigger_id: StrictStr | None = None


class _SlashCommand(_Envelope):
    command: StrictStr
    user_id: StrictStr
    channel_id: StrictStr
    text: StrictStr = Field("", max_length=COMMAND_TEXT_CHARS)


class _Action(BaseModel):
    action_id: StrictStr
    block_id: StrictStr | None = None
    value: StrictStr | None = None


class _User(_Ref):
    """The person behind a click or a submit, as the listeners read them: a `_Ref` whose id is there."""

    id: StrictStr


class _BlockActions(_Envelope):
    user: _User
    channel: _Ref | None = None  # where the clicked message is; absent on the App Home tab
    actions: list[_Action] = Field(min_length=1)


class _Option(BaseModel):
    value: StrictStr


class _ElementState(BaseModel):
    """One input's submitted state, as the modals' readers take it."""

    value: StrictStr | None = None
    selected_option: _Option | None = None
    selected_options: list[_Option] | None = None


class _ViewState(BaseModel):
    values: dict[str, dict[str, _ElementState]] = {}


class _View(_AnyView):
    type: StrictStr
    callback_id: StrictStr
    private_metadata: StrictStr  # "" when a view sets none; every modal of this app sets one
    state: _ViewState | None = None


class _ViewPayload(_Envelope):
    user: _User
    view: _View


class _Event(_Nested):
    type: StrictStr
    tab: StrictStr | None = None
    team: StrictStr | None = None
    user_team: StrictStr | None = None
    item: _Nested | None = None


class _EventCallback(_Envelope):
    event: _Event


class _HomeOpened(_Event):
    user: StrictStr


class _UrlVerification(BaseModel):
    challenge: StrictStr


_BY_TYPE: dict[str, type[BaseModel]] = {
    "block_actions": _BlockActions,
    "view_submission": _ViewPayload,
    "view_closed": _ViewPayload,
    "event_callback": _EventCallback,
    "url_verification": _UrlVerification,
}


def payload_problem(body: object) -> str | None:
    """None when Bolt and the listeners can read the body; else what is wrong, by field name only."""
    if not isinstance(body, dict):
        return "the payload is not a JSON object"
    if "ssl_check" in body:
        return None
    model = _SlashCommand if "command" in body else _BY_TYPE.get(str(body.get("type")))
    if model is None:
        return "not a kind of request this app handles"
    problem = _problem(model, body)
    if problem is None and body.get("type") == "view_submission":
        problem = _metadata_problem(body["view"])
    event = body.get("event")
    if problem is None and isinstance(event, dict) and event.get("type") == "app_home_opened":
        problem = _problem(_HomeOpened, event, "event.")
    return problem


def _metadata_problem(view: dict[str, Any]) -> str | None:
    pattern = _METADATA.get(view["callback_id"])
    if pattern is None or pattern.fullmatch(view["private_metadata"]):
        return None
    return "view.private_metadata: not what this app's modal holds there"


def _problem(model: type[BaseModel], body: dict[str, Any], where: str = "") -> str | None:
    try:
        model.model_validate(body)
    except ValidationError as exc:
        return "; ".join(f"{where}{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
    return None


class Intake:
    """Screens requests with the app's signing secret; passes the parsed request on to Bolt."""

    def __init__(self, signing_secret: str) -> None:
        self._verifier = SignatureVerifier(signing_secret)

    async def screen(self, request: web.Request) -> AsyncBoltRequest | web.Response:
        raw = await request.read()
        try:
            # Slack signs and sends UTF-8; the verifier would decode it as such and raise on anything else.
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            log.info("refused a request whose body is not UTF-8 (%s bytes)", len(raw))
            return web.json_response({"error": "the body is not UTF-8"}, status=400)
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature")
        if not _TIMESTAMP.fullmatch(timestamp) or not self._verifier.is_valid(text, timestamp, signature):
            return web.json_response({"error": "invalid request"}, status=401)
        try:
            text = raw.decode(request.charset or "utf-8")
            body = parse_body(text, request.content_type)  # as Bolt parses it
        except (ValueError, LookupError, RecursionError):  # bad JSON or text; nesting too deep to parse
            return _malformed("the body does not parse as Slack sends it (a form or JSON)")
        problem = payload_problem(body)
        if problem:
            return _malformed(problem)
        return _ScreenedRequest(text, body, request.query_string, request.headers)


class _ScreenedRequest(AsyncBoltRequest):
    """Bolt's request as it builds one from an HTTP body (`mode="http"`), from the body already parsed
    here: parsed once, not again by Bolt. `raw_body` is kept, as Bolt keeps it."""

    def __init__(self, raw_body: str, body: dict[str, Any], query: str, headers: Mapping[str, str]) -> None:
        self.raw_body = raw_body
        self.query = parse_query(query)
        self.headers = build_normalized_headers(headers)  # type: ignore[arg-type]  # Bolt's own is narrower
        self.content_type = extract_content_type(self.headers)
        self.body = body
        self.context = build_async_context(AsyncBoltContext({}), self.body)
        self.lazy_only = bool(self.headers.get("x-slack-bolt-lazy-only", [False])[0])
        self.lazy_function_name = self.headers.get("x-slack-bolt-lazy-function-name", [None])[0]
        self.mode = "http"


def _malformed(problem: str) -> web.Response:
    log.info("refused a signed request with a malformed payload: %s", problem)
    return web.json_response({"error": f"malformed payload: {problem}"}, status=400)
