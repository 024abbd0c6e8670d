"""CSB's error fingerprints (`status_fingerprints.py`), in their order, with the error catalog's flags.

The text is the exception's type, message and traceback joined by spaces; the twelve patterns are tried
in this fixed order, case-insensitive, and the first match wins: `403` anywhere (a traceback's line
number too) is `token_refresh_403`, and `AgentTimeoutError` is `timeout`. Order decides verdicts, so it is
kept as CSB wrote it. Auto-retry is the `docs/ERROR_CATALOG.md` summary table (not a code field in CSB).

Categories (A rerun as is, B fix setup, C re-score, D genuine) are `docs/AGENT_OPERATIONS.md` §3 and §9:
rate limit, OAuth, Docker build, connection failures are A; verifier parse is C; wall-clock timeout and
context window are D (where the fingerprint's own label says "infra", §9 files it under D and the bot
follows §9). Fingerprints §9 does not name are placed by the catalog's advice: a transient API or MCP
error and a polling-only Deep Search are A (the catalog retries them); a missing module, a permission or a
git failure need the setup fixed, B.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.domain.verdict import Category, Fingerprint

MATCHED_TEXT_LIMIT = 120


@dataclass(frozen=True)
class _Entry:
    id: str
    pattern: re.Pattern[str]
    label: str
    severity: str
    advice: str
    auto_retry: bool
    category: Category


def _entry(
    id: str, regex: str, label: str, severity: str, retry: bool, category: Category, advice: str
) -> _Entry:
    return _Entry(id, re.compile(regex, re.IGNORECASE), label, severity, advice, retry, category)


A, B, C, D = Category.A, Category.B, Category.C, Category.D
CATALOG: tuple[_Entry, ...] = (
    _entry(
        "token_refresh_403",
        r"403|Forbidden|token.*refresh|refresh.*token|credentials.*expired",
        "OAuth token refresh failure",
        "infra",
        True,
        A,
        "Check ~/.claude/.credentials.json; re-authenticate with `claude auth`.",
    ),
    _entry(
        "verifier_parse_error",
        r"verifier.*(?:parse|json|decode|invalid)|JSONDecodeError.*verifier|reward.*parse",
        "Verifier output parse error",
        "verifier",
        False,
        C,
        "Check verifier script output format; ensure reward.txt/reward.json is valid.",
    ),
    _entry(
        "api_500",
        r"500\s*Internal Server Error|api.*500|server.*error.*5\d{2}",
        "API 500 server error",
        "api",
        True,
        A,
        "Transient API issue; retry the task. If persistent, check API status page.",
    ),
    _entry(
        "api_rate_limit",
        r"rate.?limit|429|too many requests|throttl|overloaded",
        "API rate limit / overloaded",
        "api",
        True,
        A,
        "Reduce parallelism or wait before retrying. Check account quotas.",
    ),
    _entry(
        "context_window_exceeded",
        r"conversation is too long|context_window|context window|max_tokens exceeded|maximum context length"
        r"|prompt is too long",
        "Context window exceeded",
        "infra",
        False,
        D,
        "Task hit context window limit. Not a task failure — classify as infrastructure limitation.",
    ),
    _entry(
        "timeout",
        r"timeout|timed?\s*out|deadline exceeded|SIGTERM|killed.*signal",
        "Task timeout",
        "task",
        False,
        D,
        "Task exceeded time limit. Consider increasing timeout_hours or simplifying the task.",
    ),
    _entry(
        "mcp_connection",
        r"mcp.*(?:connect|refused|unavailable|error)|sourcegraph.*(?:connect|error|fail)",
        "MCP server connection failure",
        "mcp",
        True,
        A,
        "Check MCP server is running and accessible. Verify MCP config in task setup.",
    ),
    _entry(
        "import_error",
        r"ImportError|ModuleNotFoundError|No module named|cannot import",
        "Python import error",
        "setup",
        False,
        B,
        "Missing dependency in Docker image. Update Dockerfile or requirements.txt.",
    ),
    _entry(
        "docker_compose_fail",
        r"docker.*(?:compose|build|pull).*fail|container.*(?:exit|crash|fail)|OOMKill",
        "Docker/container failure",
        "setup",
        False,
        A,
        "Check Docker image availability, disk space, and memory limits.",
    ),
    _entry(
        "permission_denied",
        r"permission denied|EACCES|Operation not permitted",
        "Permission denied",
        "infra",
        False,
        B,
        "Check file/directory permissions in the task workspace.",
    ),
    _entry(
        "git_error",
        r"fatal:.*git|git.*(?:clone|checkout|pull).*fail|repository not found",
        "Git operation failure",
        "setup",
        False,
        B,
        "Check repository URL and network access. Verify git credentials if private repo.",
    ),
    _entry(
        "deep_search_polling_only",
        r"Poll for results using sg_deepsearch_read",
        "Deep Search returned polling-only (no results)",
        "warning",
        True,
        A,
        "Deep Search did not return results within polling window. Run may have degraded quality. "
        "Consider rerunning after preamble retry fix.",
    ),
)

UNKNOWN = "unknown"
API_RATE_LIMIT = "api_rate_limit"  # a rate limit or an overloaded API: the account rests
RESULT_JSON_CORRUPT = "result_json_corrupt"
IDS: tuple[str, ...] = (*(entry.id for entry in CATALOG), UNKNOWN, RESULT_JSON_CORRUPT)
AUTO_RETRY: frozenset[str] = frozenset(entry.id for entry in CATALOG if entry.auto_retry)


def fingerprint_text(exception_info: Any) -> str:
    """The text CSB matches: a dict's type, message and traceback (either key spelling) joined by spaces."""
    if exception_info is None:
        return ""
    if isinstance(exception_info, Mapping):
        parts = (
            exception_info.get("exception_type") or exception_info.get("type"),
            exception_info.get("exception_message") or exception_info.get("message"),
            exception_info.get("exception_traceback") or exception_info.get("traceback"),
        )
        return " ".join(str(part) for part in parts if part)
    return exception_info if isinstance(exception_info, str) else str(exception_info)


def fingerprint_error(exception_info: Any) -> Fingerprint | None:
    """The first of the twelve fingerprints whose pattern matches the text, else `unknown`; None if blank."""
    text = fingerprint_text(exception_info)
    if not text.strip():
        return None
    for entry in CATALOG:
        match = entry.pattern.search(text)
        if match:
            return Fingerprint(
                id=entry.id,
                label=entry.label,
                severity=entry.severity,
                advice=entry.advice,
                matched_text=match.group(0)[:MATCHED_TEXT_LIMIT],
                auto_retry=entry.auto_retry,
                category=entry.category,
            )
    return Fingerprint(
        id=UNKNOWN,
        label="Unknown error",
        severity="unknown",
        advice="Inspect result.json exception_info manually.",
        matched_text=text.strip()[:MATCHED_TEXT_LIMIT],
        auto_retry=None,
        category=None,
    )


def corrupt_result(problem: str) -> Fingerprint:
    """aggregate_status.py's fingerprint for a result.json it cannot read."""
    return Fingerprint(
        id=RESULT_JSON_CORRUPT,
        label="Corrupt result.json",
        severity="infra",
        advice="Re-run the task; result.json is unreadable.",
        matched_text=problem[:MATCHED_TEXT_LIMIT],
        auto_retry=None,
        category=Category.A,
    )
