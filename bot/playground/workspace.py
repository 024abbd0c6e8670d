"""The stand-in's memory of channels and messages, changed only through Slack-shaped operations.

Messages are kept as the dicts Slack returns, so what the bot reads back (history, replies) and what
the driver puts into a click payload are the same objects the page shows. Callers get deep copies:
nobody can change the workspace except through an operation.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.playground.api_error import ApiError
from bot.playground.change_feed import EventHub


@dataclass(slots=True)
class Channel:
    """A conversation; `bot_member` decides whether chat.postMessage answers `not_in_channel`."""

    id: str
    name: str
    bot_member: bool
    dm_user: str | None = None


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is in this workspace; stamped on every message it posts."""

    team_id: str
    user_id: str
    bot_id: str
    app_id: str


DEFAULT_CHANNELS: tuple[Channel, ...] = (
    Channel("C0PLAY", "benchmarks", bot_member=True),
    Channel("C0NOBOT", "random", bot_member=False),
)


class SlackTs:
    """Message timestamps as Slack writes them ("1700000000.000100"), strictly increasing.

    Slack's ts is the message id, so two posts in the same microsecond must still differ.
    """

    def __init__(self, time_fn: Callable[[], float]) -> None:
        self._time_fn = time_fn
        self._last = 0

    def next(self) -> str:
        micros = max(int(self._time_fn() * 1_000_000), self._last + 1)
        self._last = micros
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


class Workspace:
    """Channels, messages, threads and ephemerals of the playground team."""

    def __init__(self, bot: BotIdentity, channels: tuple[Channel, ...], ts: SlackTs, hub: EventHub) -> None:
        self.bot = bot
        self._ts = ts
        self._hub = hub
        self._channels: dict[str, Channel] = {}
        self._messages: dict[str, dict[str, dict[str, Any]]] = {}
        self._ephemerals: list[dict[str, Any]] = []
        for channel in channels:
            self.add_channel(Channel(channel.id, channel.name, channel.bot_member, channel.dm_user))

    # -- channels -------------------------------------------------------------------------------------

    def add_channel(self, channel: Channel) -> Channel:
        self._channels[channel.id] = channel
        self._messages.setdefault(channel.id, {})
        return channel

    def channels(self) -> list[Channel]:
        return list(self._channels.values())

    def open_dm(self, user_id: str) -> Channel:
        """One DM per user, id derived from the user id so tests can predict it (U0ALICE → D0ALICE)."""
        dm_id = f"D{user_id[1:]}"
        if dm_id not in self._channels:
            self.add_channel(Channel(dm_id, user_id, bot_member=True, dm_user=user_id))
        return self._channels[dm_id]

    def channel(self, ref: str) -> Channel:
        """Resolve an id, a name ("benchmarks", "#benchmarks") or a user id (which opens the DM)."""
        if ref in self._channels:
            return self._channels[ref]
        if ref.startswith(("U", "W")) and len(ref) > 1:
            return self.open_dm(ref)
        name = ref.removeprefix("#")
        for channel in self._channels.values():
            if channel.name == name and channel.dm_user is None:
                return channel
        raise ApiError("channel_not_found")

    def member_channel(self, ref: str) -> Channel:
        channel = self.channel(ref)
        if not channel.bot_member:
            raise ApiError("not_in_channel")
        return channel

    # -- messages -------------------------------------------------------------------------------------

    def post(
        self,
        channel_id: str,
        *,
        user: str,
        text: str,
        blocks: list[Any] | None = None,
        thread_ts: str | None = None,
        broadcast: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        store = self._messages[channel_id]
        root = self._thread_root(channel_id, thread_ts) if thread_ts else None
        ts = self._ts.next()
        message = self._new_message(user, text, blocks, ts)
        if root is not None:
            message["thread_ts"] = root
            if broadcast:
                message["subtype"] = "thread_broadcast"
        if metadata is not None:
            message["metadata"] = copy.deepcopy(metadata)
        store[ts] = message
        if root is not None:
            self._refresh_parent(channel_id, root)
        self._hub.publish("message_posted", channel=channel_id, ts=ts, message=copy.deepcopy(message))
        return copy.deepcopy(message)

    def update(
        self,
        channel_id: str,
        ts: str,
        *,
        text: str | None,
        blocks: list[Any] | None,
        metadata: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Like Slack, fields left out (None) keep their old value; `blocks=[]` clears the blocks."""
        message = self._require(channel_id, ts)
        if message.get("user") != self.bot.user_id:
            raise ApiError("cant_update_message")
        if text is not None:
            message["text"] = text
        if blocks is not None:
            message["blocks"] = with_block_ids(blocks)
        if metadata is not None:
            message["metadata"] = copy.deepcopy(metadata)
        message["edited"] = {"user": self.bot.user_id, "ts": self._ts.next()}
        self._hub.publish("message_updated", channel=channel_id, ts=ts, message=copy.deepcopy(message))
        return copy.deepcopy(message)

    def delete(self, channel_id: str, ts: str) -> None:
        message = self._require(channel_id, ts)
        del self._messages[channel_id][ts]
        root = message.get("thread_ts")
        if root and root != ts and root in self._messages[channel_id]:
            self._refresh_parent(channel_id, root)
        self._hub.publish("message_deleted", channel=channel_id, ts=ts)

    def message(self, channel_id: str, ts: str) -> dict[str, Any] | None:
        found = self._messages.get(channel_id, {}).get(ts)
        return copy.deepcopy(found) if found is not None else None

    def top_level(self, channel_id: str) -> list[dict[str, Any]]:
        """What the channel shows, oldest first: parents, plain posts and broadcast replies."""
        return [copy.deepcopy(m) for m in self._messages.get(channel_id, {}).values() if _is_top_level(m)]

    def replies(self, channel_id: str, ts: str) -> list[dict[str, Any]]:
        """The thread under `ts`, oldest first, without the parent."""
        store = self._messages.get(channel_id, {})
        return [copy.deepcopy(m) for m in store.values() if m.get("thread_ts") == ts and m["ts"] != ts]

    def thread_root(self, channel_id: str, ts: str) -> str:
        return self._thread_root(channel_id, ts)

    # -- ephemerals -----------------------------------------------------------------------------------

    def post_ephemeral(
        self, channel_id: str, user: str, text: str, blocks: list[Any] | None, source: str
    ) -> dict[str, Any]:
        """Ephemerals are never stored in the channel: only `user` sees them, only the page shows them."""
        ephemeral = {
            "channel": channel_id,
            "user": user,
            "text": text,
            "blocks": copy.deepcopy(blocks or []),
            "ts": self._ts.next(),
            "source": source,
        }
        self._ephemerals.append(ephemeral)
        self._hub.publish("ephemeral", **copy.deepcopy(ephemeral))
        return copy.deepcopy(ephemeral)

    def ephemerals(self, user: str | None = None) -> list[dict[str, Any]]:
        return [copy.deepcopy(e) for e in self._ephemerals if user is None or e["user"] == user]

    # -- helpers --------------------------------------------------------------------------------------

    def _new_message(self, user: str, text: str, blocks: list[Any] | None, ts: str) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "message", "user": user, "team": self.bot.team_id}
        if user == self.bot.user_id:
            message.update(bot_id=self.bot.bot_id, app_id=self.bot.app_id)
        message.update(text=text, blocks=with_block_ids(blocks), ts=ts)
        return message

    def _require(self, channel_id: str, ts: str) -> dict[str, Any]:
        message = self._messages.get(channel_id, {}).get(ts)
        if message is None:
            raise ApiError("message_not_found")
        return message

    def _thread_root(self, channel_id: str, ts: str) -> str:
        """Replying to a reply threads under its parent, as in Slack."""
        message = self._messages.get(channel_id, {}).get(ts)
        if message is None:
            raise ApiError("thread_not_found")
        return str(message.get("thread_ts", ts))

    def _refresh_parent(self, channel_id: str, root: str) -> None:
        parent = self._messages[channel_id].get(root)
        if parent is None:
            return
        replies = [
            m for m in self._messages[channel_id].values() if m.get("thread_ts") == root and m["ts"] != root
        ]
        parent["thread_ts"] = root
        parent["reply_count"] = len(replies)
        parent["reply_users"] = sorted({m["user"] for m in replies})
        parent["reply_users_count"] = len(parent["reply_users"])
        if replies:
            parent["latest_reply"] = replies[-1]["ts"]
        else:
            parent.pop("latest_reply", None)


def _is_top_level(message: dict[str, Any]) -> bool:
    thread_ts = message.get("thread_ts")
    return thread_ts is None or thread_ts == message["ts"] or message.get("subtype") == "thread_broadcast"


def with_block_ids(blocks: list[Any] | None) -> list[Any]:
    """Slack gives every block without a `block_id` one of its own; clicks report it, so do the same."""
    stored = copy.deepcopy(blocks or [])
    for i, block in enumerate(stored):
        if isinstance(block, dict) and not block.get("block_id"):
            block["block_id"] = f"pg{i}"
    return stored
