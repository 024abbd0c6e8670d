"""How long each text a user types may be, checked where it enters (command, button, modal).

One place, so the parser, the modals' server-side checks, the replies and `/csb help` state the same
numbers. Each limit keeps a card, an audit line or a reply well inside Slack's block limits.
"""

from __future__ import annotations

from bot.domain.slack_limits import MAX_MESSAGE_TEXT

MODEL_CHARS = 200  # a Harbor model string, `<provider>/<name>`
NAME_CHARS = 200  # a suite key or a Harbor config name
PATH_CHARS = 500  # a suite or selection file inside the checkout
REASON_CHARS = 500  # a cancel or reject reason (the modals ask for the same at most)
RUN_NUMBER_DIGITS = 9  # a run or request number
# A slash command's text is a message's, which Slack cuts at 40,000 characters: anything longer was not
# sent by Slack and is refused before it is parsed.
COMMAND_TEXT_CHARS = MAX_MESSAGE_TEXT
