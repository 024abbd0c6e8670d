"""The playground's fixed cast: four people whose roles the example policy file names.

Ids are fixed so policy files, tests and the page can refer to "alice" without a lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PlayUser:
    """A workspace member as `users.info` describes them."""

    id: str
    name: str
    real_name: str
    tz: str = "Europe/Berlin"
    tz_offset: int = 3600
    is_bot: bool = False

    @property
    def display_name(self) -> str:
        return self.name

    def to_slack(self, team_id: str) -> dict[str, Any]:
        """The `user` object of `users.info`, trimmed to the fields a bot reads."""
        return {
            "id": self.id,
            "team_id": team_id,
            "name": self.name,
            "real_name": self.real_name,
            "deleted": False,
            "is_bot": self.is_bot,
            "is_admin": False,
            "tz": self.tz,
            "tz_label": self.tz,
            "tz_offset": self.tz_offset,
            "profile": {
                "display_name": self.display_name,
                "real_name": self.real_name,
                "email": f"{self.name}@playground.invalid",
            },
        }


REQUESTER = "U0ALICE"
APPROVER = "U0BOB"
ADMIN = "U0CAROL"
OUTSIDER = "U0DAVE"

CAST: tuple[PlayUser, ...] = (
    PlayUser(REQUESTER, "alice", "Alice Requester"),
    PlayUser(APPROVER, "bob", "Bob Approver"),
    PlayUser(ADMIN, "carol", "Carol Admin", tz="UTC", tz_offset=0),
    PlayUser(OUTSIDER, "dave", "Dave Outsider", tz="America/New_York", tz_offset=-18000),
)


def bot_user(user_id: str) -> PlayUser:
    """The bot's own user, so `users.info` on the bot answers like Slack does."""
    return PlayUser(user_id, "csb", "CodeScaleBench bot", tz="UTC", tz_offset=0, is_bot=True)


# User groups the playground team has (`usergroups.list`): id → (handle, members).
USERGROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "S0LEADS": ("bench-leads", (ADMIN,)),
}
