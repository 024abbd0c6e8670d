"""Block Kit builders: pure functions from view models to `slack_sdk.models` blocks."""

from bot.slack.views.approval_card import CardView, approval_card, card_fallback_text
from bot.slack.views.run_status import (
    LaneView,
    RunView,
    status_fallback_text,
    status_message,
    summary_fallback_text,
    summary_message,
)

__all__ = [
    "CardView",
    "LaneView",
    "RunView",
    "approval_card",
    "card_fallback_text",
    "status_fallback_text",
    "status_message",
    "summary_fallback_text",
    "summary_message",
]
