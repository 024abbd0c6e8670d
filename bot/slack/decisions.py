"""Approve/Reject clicks: call the request service and tell the clicker when the click changed nothing."""

from __future__ import annotations

from bot.services.replies import ReplyService
from bot.services.requests import Decision, DecisionResult, RunRequestService
from bot.slack.errors import describe
from bot.slack.payloads import ButtonClick
from bot.slack.views.format import user


class DecisionHandler:
    def __init__(self, requests: RunRequestService, replies: ReplyService) -> None:
        self._requests = requests
        self._replies = replies

    async def approve(self, click: ButtonClick) -> None:
        await self._decide(click, approve=True)

    async def reject(self, click: ButtonClick) -> None:
        await self._decide(click, approve=False)

    async def _decide(self, click: ButtonClick, *, approve: bool) -> None:
        try:
            request_id = click.row_id
            if approve:
                decision = await self._requests.approve(request_id, click.user_id)
            else:
                decision = await self._requests.reject(request_id, click.user_id)
            reply = _unchanged_text(request_id, decision)
        except Exception as exc:
            reply = describe(exc)
        if reply:
            await self._replies.ephemeral(click.response_url, reply)


def _unchanged_text(request_id: int, decision: Decision) -> str | None:
    if decision.result is DecisionResult.NOT_FOUND:
        return f"Request #{request_id} does not exist any more."
    if decision.result is DecisionResult.ALREADY_DECIDED:
        state = decision.state.value if decision.state else "decided"
        by = f" by {user(decision.decided_by)}" if decision.decided_by else ""
        return f"Request #{request_id} was already {state}{by}; your click changed nothing."
    return None
