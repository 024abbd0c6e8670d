"""Modals and home tabs: the views a bot opens, updates and publishes, keyed as Slack keys them.

A trigger id is issued to one user by a slash command or click and can be exchanged once, which is
what lets `views.open` know whose screen the modal is on.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from bot.playground.api_error import ApiError
from bot.playground.change_feed import EventHub
from bot.playground.workspace import BotIdentity, with_block_ids

_VIEW_DEFAULTS: dict[str, Any] = {
    "private_metadata": "",
    "callback_id": "",
    "external_id": "",
    "clear_on_close": False,
    "notify_on_close": False,
    "close": None,
    "submit": None,
}


class Surfaces:
    """Open modals (by view id) and published home tabs (by user), plus the trigger ids that open them."""

    def __init__(self, bot: BotIdentity, hub: EventHub) -> None:
        self._bot = bot
        self._hub = hub
        self._counter = itertools.count(1)
        self._triggers: dict[str, str | None] = {}
        self._modals: dict[str, dict[str, Any]] = {}
        self._owners: dict[str, str] = {}
        self._homes: dict[str, dict[str, Any]] = {}

    def issue_trigger(self, user_id: str) -> str:
        trigger_id = f"{next(self._counter)}.{self._bot.team_id}.playground"
        self._triggers[trigger_id] = user_id
        return trigger_id

    def open(self, trigger_id: str, view: dict[str, Any]) -> dict[str, Any]:
        if trigger_id not in self._triggers:
            raise ApiError("invalid_trigger_id")
        user_id = self._triggers[trigger_id]
        if user_id is None:
            raise ApiError("exchanged_trigger_id")
        self._triggers[trigger_id] = None
        stored = self._new_view(view)
        self._modals[stored["id"]] = stored
        self._owners[stored["id"]] = user_id
        self._hub.publish("view_opened", user=user_id, view=copy.deepcopy(stored))
        return copy.deepcopy(stored)

    def update(
        self, view_id: str | None, external_id: str | None, view: dict[str, Any], hash_: str | None
    ) -> dict[str, Any]:
        """Update a modal or a home tab in place; a stale `hash` is refused as in Slack."""
        current = self._find(view_id, external_id)
        if hash_ and hash_ != current["hash"]:
            raise ApiError("hash_conflict")
        current.update(self._new_view(view, keep_id=current["id"], state=current["state"]))
        self._hub.publish("view_updated", user=self.owner(current["id"]), view=copy.deepcopy(current))
        return copy.deepcopy(current)

    def publish(self, user_id: str, view: dict[str, Any], hash_: str | None) -> dict[str, Any]:
        current = self._homes.get(user_id)
        if current is not None and hash_ and hash_ != current["hash"]:
            raise ApiError("hash_conflict")
        stored = self._new_view(view, keep_id=current["id"] if current else None)
        self._homes[user_id] = stored
        self._owners[stored["id"]] = user_id
        self._hub.publish("home_published", user=user_id, view=copy.deepcopy(stored))
        return copy.deepcopy(stored)

    def close(self, view_id: str) -> None:
        """What Slack does when a submission is acked without errors, or the user presses Close."""
        if self._modals.pop(view_id, None) is not None:
            self._hub.publish("view_closed", user=self._owners.get(view_id), view_id=view_id)

    def view(self, view_id: str) -> dict[str, Any] | None:
        found = self._modals.get(view_id) or next(
            (v for v in self._homes.values() if v["id"] == view_id), None
        )
        return copy.deepcopy(found) if found is not None else None

    def owner(self, view_id: str) -> str | None:
        return self._owners.get(view_id)

    def modals(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self._modals)

    def home(self, user_id: str) -> dict[str, Any] | None:
        found = self._homes.get(user_id)
        return copy.deepcopy(found) if found is not None else None

    def _find(self, view_id: str | None, external_id: str | None) -> dict[str, Any]:
        candidates = [*self._modals.values(), *self._homes.values()]
        for view in candidates:
            if (view_id and view["id"] == view_id) or (external_id and view["external_id"] == external_id):
                return view
        raise ApiError("not_found")

    def _new_view(
        self, view: dict[str, Any], keep_id: str | None = None, state: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        n = next(self._counter)
        view_id = keep_id or f"V0PLAY{n:05d}"
        stored = {**_VIEW_DEFAULTS, **copy.deepcopy(view)}
        stored["blocks"] = with_block_ids(view.get("blocks"))
        stored.update(
            id=view_id,
            team_id=self._bot.team_id,
            app_id=self._bot.app_id,
            bot_id=self._bot.bot_id,
            state=copy.deepcopy(state) if state is not None else {"values": {}},
            hash=f"{n}.playground{n:04x}",
            root_view_id=view_id,
            previous_view_id=None,
        )
        return stored
