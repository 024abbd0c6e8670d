"""What CSB's own tools would say about one lane's trial, as a typed record stored with the lane.

Computed once, when the lane ends (`bot.csb.verdicts`), and kept: the report, the card and the retry
rules read this record, never the trial folder again. Each field is one tool's verdict in that tool's
own vocabulary (a zero-token trial is `errored` to the MANIFEST and `completed_fail` to the status
tool); nothing here merges them. `None` means unknown, never zero: a lane without a transcript has no
MCP call count, and is not invalid for that.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ManifestStatus(StrEnum):
    """`generate_manifest.py`'s per-task status."""

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"


class ManifestRule(StrEnum):
    """Which of the MANIFEST's rules made a trial `errored`."""

    EXCEPTION_WITHOUT_REWARD = "exception_without_reward"
    ZERO_TOKEN = "zero_token"
    CRASH = "crash"


class StatusToolStatus(StrEnum):
    """`aggregate_status.py`'s `classify_task` status."""

    COMPLETED_PASS = "completed_pass"
    COMPLETED_FAIL = "completed_fail"
    ERRORED = "errored"


class Category(StrEnum):
    """CSB's failure categories (`docs/AGENT_OPERATIONS.md` §3, §9)."""

    A = "A"  # infrastructure: rerun as is
    B = "B"  # setup or config: fix it, then rerun
    C = "C"  # verifier or oracle: fix it, re-score
    D = "D"  # genuine agent failure: never rerun


class Fingerprint(BaseModel):
    """`status_fingerprints.py`'s verdict on an exception, with the error catalog's auto-retry flag.

    `auto_retry` is None where the catalog says nothing (`unknown`, `result_json_corrupt`).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    label: str
    severity: str
    advice: str
    matched_text: str
    auto_retry: bool | None
    category: Category | None


class Flag(BaseModel):
    """One flag `validate_task_run.py` raises (rule, CRITICAL|WARNING|INFO, its message)."""

    model_config = ConfigDict(frozen=True)

    rule: str
    severity: str
    message: str


class Tokens(BaseModel):
    """Tokens as `cost_report.py` takes them: input uncached, the cache apart (None: not reported)."""

    model_config = ConfigDict(frozen=True)

    input: int | None = None
    output: int | None = None
    cache_write: int | None = None
    cache_read: int | None = None


class CostSource(StrEnum):
    TASK_METRICS = "task_metrics"  # `task_metrics.json` `cost_usd`
    FORMULA = "formula"  # cost_report.py's fallback per-MTok prices


class LaneVerdict(BaseModel):
    """Every CSB verdict on one lane's trial; `unread` says what could not be read, and why."""

    model_config = ConfigDict(frozen=True)

    config: str
    status_tool: StatusToolStatus
    manifest_status: ManifestStatus
    manifest_rule: ManifestRule | None = None
    manifest_reward: float = 0.0
    timed_out: bool = False
    timeout_seconds: float | None = None
    fingerprint: Fingerprint | None = None
    flags: tuple[Flag, ...] = ()
    mcp_calls: int | None = None
    deep_search_calls: int | None = None
    mcp_tools_available: bool | None = None
    auth_errors: tuple[str, ...] = ()
    mcp_errors: tuple[str, ...] = ()
    contaminated: bool = False  # a baseline lane that called an MCP tool
    tokens: Tokens = Tokens()
    cost_usd: float | None = None
    cost_source: CostSource | None = None
    unread: tuple[str, ...] = ()

    @property
    def zero_token(self) -> bool:
        return self.manifest_rule is ManifestRule.ZERO_TOKEN


def stored_verdict(text: str | None) -> LaneVerdict | None:
    """A lane's stored verdict (`lanes.verdict_json`), or None when it has none or it no longer parses."""
    if not text:
        return None
    try:
        return LaneVerdict.model_validate_json(text)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None
