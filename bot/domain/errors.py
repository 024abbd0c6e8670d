"""One error tree for the whole bot; only `bot.slack.errors` turns these into words for Slack."""

from __future__ import annotations


class CsbBotError(Exception):
    """Base of every error the bot raises on purpose."""


class UserInputError(CsbBotError):
    """Something the user typed is wrong; the message is shown verbatim, ephemeral.

    `hint` is a usage line appended after the message so every error ends with how to do it right.
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class PolicyError(CsbBotError):
    """The user is not allowed to do this; the message names who may."""


class InfraError(CsbBotError):
    """The bot's surroundings are broken (CSB checkout, harbor, database); an operator must act."""
