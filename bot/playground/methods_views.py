"""views.* methods: modals opened from a trigger, and each user's home tab."""

from __future__ import annotations

from typing import Any

from bot.playground.api_args import Args
from bot.playground.api_context import ApiContext, invalid_blocks
from bot.playground.api_error import ApiError
from bot.playground.blockkit_limits import check_view


def views_open(ctx: ApiContext, args: Args) -> dict[str, Any]:
    trigger_id = args.required("trigger_id", "invalid_trigger_id")
    view = _view(args, kind="modal")
    return {"view": ctx.surfaces.open(trigger_id, view)}


def views_update(ctx: ApiContext, args: Args) -> dict[str, Any]:
    view_id, external_id = args.optional("view_id"), args.optional("external_id")
    if view_id is None and external_id is None:
        raise ApiError("invalid_arguments")
    view = _view(args, kind=None)
    return {"view": ctx.surfaces.update(view_id, external_id, view, args.optional("hash"))}


def views_publish(ctx: ApiContext, args: Args) -> dict[str, Any]:
    user = ctx.user(args.optional("user_id"))
    view = _view(args, kind="home")
    return {"view": ctx.surfaces.publish(user.id, view, args.optional("hash"))}


def _view(args: Args, kind: str | None) -> dict[str, Any]:
    view = args.parsed("view")
    if not isinstance(view, dict):
        raise ApiError("invalid_arguments")
    errors = check_view(view)
    if errors:
        raise invalid_blocks(errors)
    if kind is not None and view.get("type") != kind:
        raise ApiError("invalid_arguments")
    return view
