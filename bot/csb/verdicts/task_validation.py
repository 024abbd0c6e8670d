"""CSB's post-run validation (`validate_task_run.py`'s `validate_task`): its flags for one trial.

`task_metrics.json` is the primary source; result.json adds the exception, the agent result and the task
id. A count that is absent or null raises no flag (`tool_calls_mcp: null` is not "never used"); a field
holding a word where a number belongs is read as absent here (CSB's script would stop on it) and noted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.csb.verdicts.bounded_read import Notes, number
from bot.csb.verdicts.config_names import DEEP_SEARCH_CONFIGS, is_mcp_config
from bot.domain.verdict import Flag

CRITICAL, WARNING, INFO = "CRITICAL", "WARNING", "INFO"
_WHERE = "task_metrics.json"


def validate_task(
    metrics: Mapping[str, Any] | None,
    result: Mapping[str, Any] | None,
    task_id: str,
    config: str,
    notes: Notes,
) -> tuple[Flag, ...]:
    data = metrics or {}
    flags: list[Flag] = []

    def flag(rule: str, severity: str, message: str) -> None:
        flags.append(Flag(rule=rule, severity=severity, message=message))

    def num(key: str) -> float | None:
        return number(data, key, notes, _WHERE)

    status = data.get("status")
    task_id = str(data.get("task_id") or task_id)
    if status == "error":
        flag("status_error", CRITICAL, "Task status is 'error'")
    if result is not None and result.get("exception_info") is not None:
        exception = result["exception_info"]
        kind = exception.get("type", "") if isinstance(exception, Mapping) else str(exception)[:80]
        flag("exception_raised", CRITICAL, f"Exception raised: {kind}")
    if result is not None and result.get("agent_result") is None:
        flag("agent_never_ran", CRITICAL, "Agent never ran (agent_result is null)")
    if "[CRASHED]" in task_id:
        flag("task_crashed", CRITICAL, "Task name contains [CRASHED]")
    if is_mcp_config(config) and num("tool_calls_mcp") == 0:
        flag("mcp_never_used", CRITICAL, "MCP tools were never called in MCP-enabled mode")
    if config in DEEP_SEARCH_CONFIGS and num("search_calls_deepsearch") == 0:
        flag("deepsearch_unused", WARNING, "Deep Search was never used in MCP mode")
    reward, calls = num("reward"), num("tool_calls_total")
    if reward is not None and reward < 0.1 and (calls is None or calls < 3):
        shown = "null" if calls is None else f"{calls:g}"
        flag("barely_tried", WARNING, f"Low reward ({reward}) with minimal/unmeasured tool calls ({shown})")
    output = num("output_tokens")
    if (
        all(
            num(key) is None
            for key in ("input_tokens", "output_tokens", "tool_calls_total", "files_modified")
        )
        and status != "error"
    ):
        flag("metrics_extraction_failed", WARNING, "All metrics are null — metric extraction may have failed")
    wall = num("wall_clock_seconds")
    if wall is not None and wall < 10 and not (status == "error" or "[CRASHED]" in task_id):
        flag("suspiciously_fast", WARNING, f"Task completed in {wall:.1f}s (suspiciously fast)")
    if output is not None and output < 50:
        flag("no_output_tokens", WARNING, f"Output tokens very low: {output:g}")
    ratio = num("mcp_ratio")
    if is_mcp_config(config) and ratio is not None:
        flag("mcp_ratio_report", INFO, f"MCP ratio: {ratio:.2%}")
    return tuple(flags)
