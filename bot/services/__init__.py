"""What listeners call: each service changes rows in one transaction and never calls Slack."""

from bot.services.approvals import ApprovalService, Decision, Outcome
from bot.services.checks import CheckRunner, RequestChecks
from bot.services.home import HomeService
from bot.services.queries import QueryService
from bot.services.reply_queue import ReplyService
from bot.services.requests import RunRequestService

__all__ = [
    "ApprovalService",
    "CheckRunner",
    "Decision",
    "HomeService",
    "Outcome",
    "QueryService",
    "ReplyService",
    "RequestChecks",
    "RunRequestService",
]
