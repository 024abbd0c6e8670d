"""chat.* methods: how the bot posts, edits and deletes its cards and thread messages."""

from __future__ import annotations

from typing import Any

from bot.playground.api_args import Args
from bot.playground.api_context import ApiContext, message_content, message_metadata


def chat_post_message(ctx: ApiContext, args: Args) -> dict[str, Any]:
    channel = ctx.workspace.member_channel(args.required("channel", "channel_not_found"))
    text, blocks = message_content(args)
    message = ctx.workspace.post(
        channel.id,
        user=ctx.workspace.bot.user_id,
        text=text or "",
        blocks=blocks,
        thread_ts=args.optional("thread_ts"),
        broadcast=args.flag("reply_broadcast"),
        metadata=message_metadata(args),
    )
    return {"channel": channel.id, "ts": message["ts"], "message": message}


def chat_update(ctx: ApiContext, args: Args) -> dict[str, Any]:
    channel = ctx.workspace.channel(args.required("channel", "channel_not_found"))
    ts = args.required("ts", "message_not_found")
    text, blocks = message_content(args, require=False)
    message = ctx.workspace.update(channel.id, ts, text=text, blocks=blocks, metadata=message_metadata(args))
    return {"channel": channel.id, "ts": ts, "text": message["text"], "message": message}


def chat_post_ephemeral(ctx: ApiContext, args: Args) -> dict[str, Any]:
    channel = ctx.workspace.member_channel(args.required("channel", "channel_not_found"))
    user = ctx.user(args.optional("user"))
    text, blocks = message_content(args)
    ephemeral = ctx.workspace.post_ephemeral(channel.id, user.id, text or "", blocks, "chat.postEphemeral")
    return {"message_ts": ephemeral["ts"]}


def chat_delete(ctx: ApiContext, args: Args) -> dict[str, Any]:
    channel = ctx.workspace.channel(args.required("channel", "channel_not_found"))
    ts = args.required("ts", "message_not_found")
    ctx.workspace.delete(channel.id, ts)
    return {"channel": channel.id, "ts": ts}
