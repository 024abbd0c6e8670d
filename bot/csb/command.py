"""The `harbor run` of one lane of one task, its environment and its folders, exactly as CSB lays them out.

Kept byte-compatible with CSB's harness so runs the bot starts sit beside CSB's own under `runs/` and
CSB's scripts (status, manifest, promotion) read them unchanged.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

AGENT_IMPORT_PATH = "agents.claude_baseline_agent:BaselineClaudeCodeAgent"
DEFAULT_TIMEOUT_MULTIPLIER = 10

_MODEL_FAMILIES = ("opus", "sonnet", "haiku")  # CSB's order of checks


@dataclass(frozen=True)
class LaunchConfig:
    """What every lane command shares: where CSB lives, which harbor, and the environment to start from."""

    repo: Path
    harbor: str
    base_env: Mapping[str, str]
    timeout_multiplier: int
    daytona: bool


def model_short(model: str) -> str:
    """`haiku|sonnet|opus` as in CSB's run folder names; else the model's last path segment, made folder-safe.

    Underscores are removed from the fallback because `_` separates the parts of a run folder name.
    """
    last = model.rsplit("/", 1)[-1].lower()
    family = next((name for name in _MODEL_FAMILIES if name in last), None)
    if family:
        return family
    return re.sub(r"[^a-z0-9.]+", "-", last).strip("-.") or "model"


def run_dir_name(suite_label: str, model: str, started: datetime, run_id: str) -> str:
    """`<suite>_<short>_<YYYYmmdd_HHMMSS>_<run_id>`: CSB's name plus the run id, so two runs never collide."""
    suite = re.sub(r"[^A-Za-z0-9_.-]+", "-", suite_label).strip("-.") or "tasks"
    return f"{suite}_{model_short(model)}_{started:%Y%m%d_%H%M%S}_{run_id}"


def jobs_dir(category: str, run_dir: str, lane_config: str) -> str:
    """Harbor's `--jobs-dir` for a lane, relative to the checkout root."""
    return f"runs/{category}/{run_dir}/{lane_config}"


def lane_command(
    harbor: str,
    task_path: str,
    model: str,
    jobs_dir: str,
    *,
    daytona: bool = False,
    timeout_multiplier: int = DEFAULT_TIMEOUT_MULTIPLIER,
) -> list[str]:
    """The argv CSB's harness runs for one lane; run it from the checkout root."""
    argv = [
        harbor, "run",
        "--path", task_path,
        "--agent-import-path", AGENT_IMPORT_PATH,
        "--model", model,
        "--jobs-dir", jobs_dir,
        "-n", "1",
        "--timeout-multiplier", str(timeout_multiplier),
    ]  # fmt: skip
    if daytona:
        argv += ["--env", "daytona"]
    return argv


def lane_env(base: Mapping[str, str], *, home: str, mcp_type: str) -> dict[str, str]:
    """The lane's environment: the bot's own minus every `SLACK_*` secret, with the account's HOME.

    Harbor and the agent inherit this, so the Slack tokens must never reach a task container.
    """
    env = {key: value for key, value in base.items() if not key.startswith("SLACK_")}
    env["HOME"] = home
    env["BASELINE_MCP_TYPE"] = mcp_type
    return env


def shell_line(argv: Sequence[str], env_overrides: Mapping[str, str]) -> str:
    """A copy-pasteable line for the card and logs: `BASELINE_MCP_TYPE=… harbor run …`."""
    prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in env_overrides.items())
    command = shlex.join(argv)
    return f"{prefix} {command}" if prefix else command
