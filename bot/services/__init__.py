"""What listeners call: each service changes rows in one transaction and never calls Slack."""

from .approvals import ApprovalService, Decision, Outcome
from .checks import CheckRunner, RequestChecks
from .home import HomeService
from .queries import QueryService
from .replies import ReplyService
from .requests import RunRequestService

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
