"""Slack's side: the Bolt app (`app`), what comes in (`inbound/`: intake, thin listeners, handlers), what goes
out (`outbound/`: the notifier that delivers the outbox), and the Block Kit views both use (`views/`)."""

from typing import TYPE_CHECKING

from bot.domain.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from bot.slack.app import create_app, create_client
    from bot.slack.outbound.notifier import Notifier

__all__ = ["Notifier", "create_app", "create_client"]
# Loaded on first use: `bot.slack.scopes`, read by `csb-bot check` and the playground, needs no app.
__getattr__ = lazy_exports(
    __name__, {"bot.slack.app": ("create_app", "create_client"), "bot.slack.outbound.notifier": ("Notifier",)}
)
