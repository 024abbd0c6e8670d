"""Block Kit builders: pure functions from view models to `slack_sdk.models` blocks."""

from bot.slack.views.approval_card import CardView, approval_card, card_fallback_text
from bot.slack.views.home import HomeView, home_tab
from bot.slack.views.report import ReportMessage, ReportView, paired_report
from bot.slack.views.report_csv import report_csv
from bot.slack.views.run_card import RunCardView, run_blocks

__all__ = [
    "CardView",
    "HomeView",
    "ReportMessage",
    "ReportView",
    "RunCardView",
    "approval_card",
    "card_fallback_text",
    "home_tab",
    "paired_report",
    "report_csv",
    "run_blocks",
]
