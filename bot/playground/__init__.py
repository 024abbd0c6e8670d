"""The playground's Slack: a local Web API stand-in and a driver that plays the users.

Tests and `csb-bot playground` serve `SlackStandin.build_app()` on loopback, point the bot's
`AsyncWebClient(base_url=...)` at its `/api/`, and use `SlackDriver` to send signed requests.
"""

from typing import TYPE_CHECKING

from bot.domain.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from bot.playground.api_error import ApiError
    from bot.playground.blockkit_limits import check_message_blocks, check_view, message_text_too_long
    from bot.playground.driver import ButtonNotFound, DriverResponse, SlackDriver
    from bot.playground.payloads import Button, buttons
    from bot.playground.recording import RecordedCall
    from bot.playground.signing import slack_signature
    from bot.playground.standin import SlackStandin
    from bot.playground.users import ADMIN, APPROVER, CAST, OUTSIDER, REQUESTER, PlayUser
    from bot.playground.workspace import DEFAULT_CHANNELS, Channel

__all__ = [
    "ADMIN",
    "APPROVER",
    "CAST",
    "DEFAULT_CHANNELS",
    "OUTSIDER",
    "REQUESTER",
    "ApiError",
    "Button",
    "ButtonNotFound",
    "Channel",
    "DriverResponse",
    "PlayUser",
    "RecordedCall",
    "SlackDriver",
    "SlackStandin",
    "buttons",
    "check_message_blocks",
    "check_view",
    "message_text_too_long",
    "slack_signature",
]
# Loaded on first use: `csb-bot playground` reads its settings (`bot.playground.cli`) before it needs any.
__getattr__ = lazy_exports(
    __name__,
    {
        "bot.playground.api_error": ("ApiError",),
        "bot.playground.blockkit_limits": ("check_message_blocks", "check_view", "message_text_too_long"),
        "bot.playground.driver": ("ButtonNotFound", "DriverResponse", "SlackDriver"),
        "bot.playground.payloads": ("Button", "buttons"),
        "bot.playground.recording": ("RecordedCall",),
        "bot.playground.signing": ("slack_signature",),
        "bot.playground.standin": ("SlackStandin",),
        "bot.playground.users": ("ADMIN", "APPROVER", "CAST", "OUTSIDER", "REQUESTER", "PlayUser"),
        "bot.playground.workspace": ("DEFAULT_CHANNELS", "Channel"),
    },
)
