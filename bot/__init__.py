"""csb-bot: a Slack control plane for paired CodeScaleBench runs."""

__version__ = "0.1.0"
