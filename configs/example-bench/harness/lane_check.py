"""What CSB's agent needs from a lane, checked and recorded: the part of the agent stand-in both share.

The example bench's agent stand-in (`agents.claude_baseline_agent:BaselineClaudeCodeAgent`, CSB's import
path) runs under the bench's own `bin/harbor` and, as a Harbor agent, under real Harbor. Either way it
first checks the lane environment CSB's agent depends on:
- it refuses to run unless USE_SUBSCRIPTION=true (CSB's agent would otherwise ignore the account's
  credentials in HOME, so account rotation would do nothing);
- it picks the instruction as CSB's agent does: with INSTRUCTION_VARIANT other than `default`,
  `instruction_<variant>.md`, then `instruction_<variant up to its first _>.md`, from TASK_SOURCE_DIR
  (the original task folder); else `instruction.md` of the folder Harbor was given;
- it writes what it saw to `<trial>/agent/lane-env.json`: HOME, BASELINE_MCP_TYPE, TASK_SOURCE_DIR,
  INSTRUCTION_VARIANT, SOURCEGRAPH_REPOS, the names of any SLACK_* variables it was given (there
  should be none), the instruction file it picked and the sha256 of the `environment/Dockerfile` the
  lane was built from.
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

RECORD_FILE = "lane-env.json"
RECORDED = (
    "HOME",
    "BASELINE_MCP_TYPE",
    "TASK_SOURCE_DIR",
    "INSTRUCTION_VARIANT",
    "SOURCEGRAPH_REPOS",
    "USE_SUBSCRIPTION",
    "REPO_ROOT",
    "DOCKER_BUILDKIT",
    "PYTHONPATH",
    "SOURCEGRAPH_URL",
    "DAYTONA_COST_GUARD_PREFLIGHT_DONE",
)


class AgentSetupError(RuntimeError):
    """The lane's environment is not one CSB's agent could run in."""


class LaneCheck:
    """One trial's lane check: `setup()` checks the environment, `record()` writes what it saw."""

    def __init__(self, task_path: Path, logs_dir: Path, environ: Mapping[str, str] | None = None) -> None:
        self.task_path = task_path
        self.logs_dir = logs_dir
        self.environ = dict(os.environ if environ is None else environ)

    def setup(self) -> None:
        if self.environ.get("USE_SUBSCRIPTION", "").lower() != "true":
            raise AgentSetupError(
                "agent stand-in refuses to run: USE_SUBSCRIPTION is not 'true', so CSB's agent would ignore "
                "the account credentials in HOME"
            )

    def instruction_file(self) -> Path:
        """The instruction CSB's agent would give the model (see the module docstring)."""
        variant = self.environ.get("INSTRUCTION_VARIANT", "default")
        source = self.environ.get("TASK_SOURCE_DIR", "")
        if variant != "default" and source:
            for name in (f"instruction_{variant}.md", f"instruction_{variant.split('_', 1)[0]}.md"):
                if (Path(source) / name).is_file():
                    return Path(source) / name
        return self.task_path / "instruction.md"

    def record(self) -> dict[str, object]:
        """Write and return what this lane ran with."""
        dockerfile = self.task_path / "environment" / "Dockerfile"
        data: dict[str, object] = {key: self.environ.get(key) for key in RECORDED}
        data["SLACK_VARIABLES"] = sorted(key for key in self.environ if key.startswith("SLACK_"))
        data["instruction_file"] = str(self.instruction_file())
        data["dockerfile_sha256"] = (
            hashlib.sha256(dockerfile.read_bytes()).hexdigest() if dockerfile.is_file() else None
        )
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / RECORD_FILE).write_text(json.dumps(data, indent=2) + "\n")
        return data
