"""Slack's side: the Bolt app (`app`), what comes in (`inbound/`: intake, thin listeners, handlers), what goes
out (`outbound/`: the notifier that delivers the outbox), and the Block Kit views both use (`views/`)."""

from bot.slack.app import create_app, create_client
from bot.slack.outbound.notifier import Notifier

__all__ = ["Notifier", "create_app", "create_client"]
