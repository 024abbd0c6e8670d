"""Read methods (auth.test, users.info, conversations.*): how the bot learns who and what is there.

Message metadata is only returned with `include_all_metadata`, as in Slack, so a bot that looks for
its idempotency key without asking for it fails here first.
"""

from __future__ import annotations

from typing import Any

from bot.playground.api_args import Args
from bot.playground.api_context import ApiContext
from bot.playground.api_error import ApiError
from bot.playground.users import USERGROUPS, bot_user

MAX_PAGE = 999


def auth_test(ctx: ApiContext, args: Args) -> dict[str, Any]:
    bot = ctx.workspace.bot
    return {
        "url": "https://csb-playground.slack.com/",
        "team": "CSB Playground",
        "user": "csb",
        "team_id": bot.team_id,
        "user_id": bot.user_id,
        "bot_id": bot.bot_id,
        "is_enterprise_install": False,
    }


def users_info(ctx: ApiContext, args: Args) -> dict[str, Any]:
    user_id = args.required("user", "user_not_found")
    bot = ctx.workspace.bot
    user = bot_user(bot.user_id) if user_id == bot.user_id else ctx.user(user_id)
    return {"user": user.to_slack(bot.team_id)}


def conversations_open(ctx: ApiContext, args: Args) -> dict[str, Any]:
    users = args.values.get("users")
    ids = [str(i).strip() for i in (users if isinstance(users, list) else str(users or "").split(","))]
    ids = [i for i in ids if i]
    if len(ids) != 1:
        raise ApiError("invalid_arguments" if ids else "users_list_not_supplied")
    user = ctx.user(ids[0])
    channel = ctx.workspace.open_dm(user.id)
    return {"channel": {"id": channel.id, "is_im": True, "user": user.id}}


def conversations_history(ctx: ApiContext, args: Args) -> dict[str, Any]:
    channel = ctx.workspace.member_channel(args.required("channel", "channel_not_found"))
    messages = list(reversed(ctx.workspace.top_level(channel.id)))
    messages = [m for m in messages if _in_window(m["ts"], args)]
    return _page(messages, args)


def conversations_replies(ctx: ApiContext, args: Args) -> dict[str, Any]:
    channel = ctx.workspace.member_channel(args.required("channel", "channel_not_found"))
    root = ctx.workspace.thread_root(channel.id, args.required("ts", "thread_not_found"))
    parent = ctx.workspace.message(channel.id, root)
    return _page([parent, *ctx.workspace.replies(channel.id, root)] if parent else [], args)


def _in_window(ts: str, args: Args) -> bool:
    """`latest`/`oldest` bound the window, exclusive unless `inclusive` is set, as in Slack."""
    here = float(ts)
    latest, oldest = _ts_arg(args, "latest"), _ts_arg(args, "oldest")
    inclusive = args.flag("inclusive")
    if latest is not None and (here > latest or (here == latest and not inclusive)):
        return False
    return not (oldest is not None and (here < oldest or (here == oldest and not inclusive)))


def _ts_arg(args: Args, key: str) -> float | None:
    value = args.optional(key)
    try:
        return float(value) if value is not None else None
    except ValueError as exc:
        raise ApiError(f"invalid_ts_{key}") from exc


def _page(messages: list[dict[str, Any]], args: Args) -> dict[str, Any]:
    """Cursor pagination with the cursor an offset; `limit` defaults to 100 like Slack's."""
    limit = min(max(args.number("limit", 100), 1), MAX_PAGE)
    cursor = args.optional("cursor") or "0"
    if not cursor.isdigit():
        raise ApiError("invalid_cursor")
    start = int(cursor)
    page = messages[start : start + limit]
    if not args.flag("include_all_metadata"):
        for message in page:
            message.pop("metadata", None)
    more = start + limit < len(messages)
    return {
        "messages": page,
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }


def usergroups_list(ctx: ApiContext, args: Args) -> dict[str, Any]:
    """The team's user groups; members only with `include_users`, as in Slack."""
    with_users = str(args.values.get("include_users", "")).lower() in ("true", "1")
    groups = []
    for group_id, (handle, members) in USERGROUPS.items():
        group: dict[str, Any] = {"id": group_id, "handle": handle, "name": handle, "user_count": len(members)}
        if with_users:
            group["users"] = list(members)
        groups.append(group)
    return {"usergroups": groups}
