"""One module per Slack surface; each `register` attaches thin listeners that ack, then call one handler."""

from bot.slack.inbound.listeners import approval, command, home, run_control

__all__ = ["approval", "command", "home", "run_control"]
