"""Slack's side: the Bolt app, thin listeners, Block Kit views and the notifier that delivers the outbox."""

from bot.slack.app import create_app, create_client
from bot.slack.notifier import Notifier

__all__ = ["Notifier", "create_app", "create_client"]
