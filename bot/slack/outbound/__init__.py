"""Delivering: what goes out to Slack. The notifier takes outbox rows, a sender per kind renders the
message from the current rows (through `bot.slack.views`), posting and pacing keep each message to
one post and Slack's budgets, and the Web API client bounds and retries each call. Nothing here
reads what Slack sends; that is `bot.slack.inbound`."""
