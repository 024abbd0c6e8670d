"""Receiving: what comes in from Slack. A request is checked before Bolt sees it (intake, Socket Mode),
its payload read into a typed record (payloads, forms), acked by a thin listener, then handed to one
handler (commands, decisions) that calls a service. Nothing here posts a message: replies go through
the outbox, which `bot.slack.outbound` delivers; only a modal opens from here, at once, because its
`trigger_id` expires in seconds."""
