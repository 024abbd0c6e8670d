"""CSB's trace audit (`audit_traces.py`): MCP calls, Deep Search calls, MCP tools offered, and the auth and
MCP errors an agent's transcript shows.

MCP calls are counted in the transcript (`agent/claude-code.txt`, one JSON event a line, each cut at
512,000 characters) and in `agent/trajectory.json` (each step's tool calls, or its message when it has
none); the trajectory's count is taken only when strictly larger, as CSB does. A lane with neither file
has an unknown count (None), never zero. Error lines are looked for only outside tool results, five of
each at most, and (unlike CSB) only in the transcript's first 16 MiB, which the verdict then says. The
transcript is read within `bounded_read`'s limits; its line count also serves the MANIFEST's crash rule
(≤ 5 lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.csb.json_file import MIB
from bot.csb.verdicts.bounded_read import Notes, read_object, transcript_blocks
from bot.domain.mrkdwn import clip

TRANSCRIPT = Path("agent") / "claude-code.txt"
TRAJECTORY = Path("agent") / "trajectory.json"
MAX_ERRORS = 5
# CSB looks for auth and MCP error lines in the whole transcript; its patterns are slow regular expressions,
# so the bot looks in the first 16 MiB (where an auth failure shows: the agent stops) and says so past it.
ERROR_SEARCH_LIMIT = 16 * MIB
_ERROR_TEXT_LIMIT = 200

_MCP_CALL = re.compile(rb'"name"\s*:\s*"mcp__sourcegraph__(?:sg_)?(\w+)"')
_MCP_NAME = re.compile(r"mcp__sourcegraph__(?:sg_)?(\w+)")
DEEP_SEARCH_TOOLS = frozenset({"deepsearch", "deepsearch_read"})
_SYSTEM = re.compile(rb'"type"\s*:\s*"system"')
_TOOL_RESULT = re.compile(rb'"type"\s*:\s*"tool_result"')
_AUTH_ERROR = re.compile(
    rb'"status":\s*401\b|"status":\s*403\b'
    rb'|(?i:"error":\s*".*(?:unauthorized|forbidden|authentication failed).*")'
    rb"|(?i:token refresh failed)|(?i:OAuth token.*(?:expired|invalid|revoked))"
    rb"|(?i:credentials\.json.*(?:expired|invalid|error))"
    rb"|(?i:ANTHROPIC_API_KEY.*(?:is invalid|has expired|authentication error))"
)
_MCP_ERROR = re.compile(
    rb"McpError|(?i:MCP server.*(?:crash|exit|disconnect|failed to start))"
    rb"|(?i:mcp_connection.*(?:error|refused|timeout|failed))|(?i:Failed to connect to MCP)"
    rb'|(?i:"error":\s*".*MCP.*(?:connect|refused|unavailable).*")'
)
# Every error pattern above needs one of these words; a line with none is not searched.
_AUTH_WORDS = (b"status", b"error", b"token", b"credentials", b"anthropic_api_key")
_MCP_WORDS = (b"mcp",)


@dataclass(frozen=True)
class TraceAudit:
    transcript_lines: int  # 0 when there is no transcript (the MANIFEST counts a missing file so)
    has_transcript: bool
    has_trajectory: bool
    mcp_calls: int | None
    deep_search_calls: int | None
    mcp_tools_available: bool | None
    auth_errors: tuple[str, ...]
    mcp_errors: tuple[str, ...]


@dataclass
class _Scan:
    lines: int = 0
    mcp: int = 0
    deep_search: int = 0
    tools_available: bool | None = None


def audit_trace(trial_dir: Path, notes: Notes) -> TraceAudit:
    """The trace audit of one trial folder; what could not be read goes to `notes`."""
    scan = _Scan()
    auth: list[str] = []
    mcp_errors: list[str] = []
    blocks = transcript_blocks(trial_dir / TRANSCRIPT, notes)
    searched = 0
    for block in blocks or ():
        if scan.lines == 0:
            first = block[: block.find(b"\n")] if b"\n" in block else block
            if _SYSTEM.search(first) and b'"init"' in first:
                scan.tools_available = b"mcp__sourcegraph" in first
        scan.lines += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
        if b"mcp__sourcegraph" in block:
            for name in _MCP_CALL.findall(block):
                scan.mcp += 1
                scan.deep_search += name in _DEEP_SEARCH_BYTES
        if searched < ERROR_SEARCH_LIMIT:
            for line in block.split(b"\n"):
                _errors_in(line, auth, mcp_errors)
            searched += len(block)
        else:
            notes.add(
                f"{TRANSCRIPT.name}: auth and MCP errors were looked for in its first {searched} bytes only"
            )
    trajectory_path = trial_dir / TRAJECTORY
    has_trajectory = trajectory_path.is_file()
    from_trajectory = _trajectory_counts(read_object(trajectory_path, notes)) if has_trajectory else None
    mcp_calls, deep_search = (scan.mcp, scan.deep_search) if blocks is not None else (None, None)
    if from_trajectory is not None:
        if mcp_calls is None or from_trajectory[0] > mcp_calls:
            mcp_calls = from_trajectory[0]
        if deep_search is None or from_trajectory[1] > deep_search:
            deep_search = from_trajectory[1]
    return TraceAudit(
        transcript_lines=scan.lines,
        has_transcript=blocks is not None,
        has_trajectory=has_trajectory,
        mcp_calls=mcp_calls,
        deep_search_calls=deep_search,
        mcp_tools_available=scan.tools_available,
        auth_errors=tuple(auth),
        mcp_errors=tuple(mcp_errors),
    )


def _errors_in(line: bytes, auth: list[str], mcp_errors: list[str]) -> None:
    """CSB's auth and MCP error patterns, on a line that is not a tool result, five of each at most."""
    if not line or (len(auth) >= MAX_ERRORS and len(mcp_errors) >= MAX_ERRORS):
        return
    if b"tool_result" in line and _TOOL_RESULT.search(line):
        return
    lower = line.lower()
    if len(auth) < MAX_ERRORS and any(word in lower for word in _AUTH_WORDS) and _AUTH_ERROR.search(line):
        auth.append(_text(line))
    if len(mcp_errors) < MAX_ERRORS and b"mcp" in lower and _MCP_ERROR.search(line):
        mcp_errors.append(_text(line))


_DEEP_SEARCH_BYTES = frozenset(name.encode() for name in DEEP_SEARCH_TOOLS)


def _trajectory_counts(data: dict[str, Any] | None) -> tuple[int, int] | None:
    """MCP and Deep Search calls in the trajectory's steps; None when it could not be read."""
    if data is None:
        return None
    steps = data.get("steps")
    mcp = deep_search = 0
    for step in steps if isinstance(steps, list) else ():
        if not isinstance(step, dict):
            continue
        calls = step.get("tool_calls")
        if calls:
            names = (
                [call.get("function_name") for call in calls if isinstance(call, dict)]
                if isinstance(calls, list)
                else []
            )
            found = [m.group(1) for n in names if isinstance(n, str) and (m := _MCP_NAME.search(n))]
        else:
            message = step.get("message")
            found = _MCP_NAME.findall(message) if isinstance(message, str) else []
        mcp += len(found)
        deep_search += sum(1 for name in found if name in DEEP_SEARCH_TOOLS)
    return mcp, deep_search


def _text(line: bytes) -> str:
    text = line.decode("utf-8", errors="replace").strip()
    return clip(text, _ERROR_TEXT_LIMIT)
