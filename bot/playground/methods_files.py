"""files.* methods of the upload flow `files_upload_v2` uses (scope files:write)."""

from __future__ import annotations

from typing import Any

from bot.playground.api_args import Args
from bot.playground.api_context import ApiContext
from bot.playground.api_error import ApiError


def files_get_upload_url_external(ctx: ApiContext, args: Args) -> dict[str, Any]:
    filename = args.required("filename", "invalid_arguments")
    length = int(args.required("length", "invalid_arguments"))
    stored = ctx.files.reserve(filename, length)
    alt_text = args.optional("alt_txt")
    if alt_text:
        stored.extra["alt_txt"] = alt_text
    return {"upload_url": ctx.files.upload_url(stored.id), "file_id": stored.id}


def files_complete_upload_external(ctx: ApiContext, args: Args) -> dict[str, Any]:
    entries = args.parsed("files")
    if not isinstance(entries, list) or not entries:
        raise ApiError("invalid_arguments")
    channel = args.optional("channel_id") or args.optional("channels")
    if channel is not None:
        ctx.workspace.member_channel(channel)
    done = []
    for entry in entries:
        stored = ctx.files.files.get(str(entry.get("id")))
        if stored is None or stored.content is None:
            raise ApiError("file_not_found")
        stored.title = entry.get("title") or stored.filename
        stored.channel, stored.thread_ts, stored.shared = (
            channel,
            args.optional("thread_ts"),
            channel is not None,
        )
        done.append(
            {"id": stored.id, "name": stored.filename, "title": stored.title, "size": len(stored.content)}
        )
        ctx.files.announce(stored)
    return {"files": done}
