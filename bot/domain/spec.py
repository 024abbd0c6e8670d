"""The run spec: the five approval parameters plus what they resolve to in the CSB checkout.

The spec hash pins exactly what was approved (parameters, task ids, the task file's content), so a
drifted suite file can be detected at launch.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from bot.domain.limits import MODEL_CHARS, NAME_CHARS, PATH_CHARS

DEFAULT_MODEL = "anthropic/claude-haiku-4-5-20251001"
DEFAULT_FULL_CONFIG = "mcp-remote-direct"


class Mode(StrEnum):
    PAIRED = "paired"
    BASELINE_ONLY = "baseline-only"
    FULL_ONLY = "full-only"


class Category(StrEnum):
    STAGING = "staging"
    OFFICIAL = "official"


class LaneRole(StrEnum):
    """Which side of a pair a lane is; the Harbor config name lives on `LanePlan`."""

    BASELINE = "baseline"
    MCP = "mcp"


class RunParams(BaseModel):
    """The five parameters a person approves, as typed (suite or file not yet resolved)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The descriptions (and `unset`, what a None default means) are shown verbatim by `/csb help run`
    # and the parser's errors, so they are written for the person typing the command.
    model: str = Field(default=DEFAULT_MODEL, description="Harbor model string the agent runs with.")
    suite: str | None = Field(
        default=None,
        description="Suite key from the task file, e.g. `csb_sdlc_fix`.",
        json_schema_extra={"unset": "every task in the file"},
    )
    suite_file: str | None = Field(
        default=None,
        description="Suite file, a path inside the CSB checkout.",
        json_schema_extra={"unset": "the checkout's default suite file"},
    )
    selection_file: str | None = Field(
        default=None,
        description="Selection file (older task list) inside the CSB checkout; not with a suite file.",
        json_schema_extra={"unset": "none"},
    )
    mode: Mode = Field(
        default=Mode.PAIRED,
        description="Which lanes run: both, or one side against existing results of the other.",
    )
    full_config: str = Field(
        default=DEFAULT_FULL_CONFIG,
        description="Harbor config of the MCP lane, e.g. `mcp-remote-artifact`.",
    )
    parallel: int | None = Field(
        default=None,
        ge=1,
        description="Harbor processes at once; a pair of lanes takes two.",
        json_schema_extra={"unset": "auto"},
    )
    category: Category = Field(default=Category.STAGING, description="Results go to `runs/<category>/`.")
    dry_run: bool = Field(default=False, description="Plan and show the run, launch nothing.")
    allow_unpaired: bool = Field(
        default=False,
        description="Allow a one-lane run for tasks without a clean counterpart result; recorded.",
    )

    @property
    def task_file(self) -> str | None:
        return self.suite_file or self.selection_file


# Checked where text enters (the `/csb run` parser, the Edit modal), not when a stored spec is read
# back: a row written before a limit existed must still render, pin and report.
FIELD_CHARS: dict[str, int] = {
    "model": MODEL_CHARS,
    "suite": NAME_CHARS,
    "suite_file": PATH_CHARS,
    "selection_file": PATH_CHARS,
    "full_config": NAME_CHARS,
}


class TaskRef(BaseModel):
    """One task of a run, located in the checkout."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    suite: str
    path: str  # task folder relative to the checkout root, e.g. benchmarks/tasks/<suite>/<task_id>
    time_limit_sec: int | None = None
    # Harbor's own longest run of this task before the timeout multiplier: build and verifier twice
    # (Harbor retries each once on a timeout), agent setup, agent. None when the task.toml is unreadable.
    harbor_budget_sec: int | None = None


class LanePlan(BaseModel):
    """One lane of every pair: its role, its Harbor config name and the BASELINE_MCP_TYPE it runs with."""

    model_config = ConfigDict(frozen=True)

    role: LaneRole
    config: str
    mcp_type: str


class RunSpec(BaseModel):
    """What an approval launches: parameters resolved against one state of the checkout."""

    model_config = ConfigDict(frozen=True)

    params: RunParams
    task_file: str  # relative to the checkout root
    task_file_sha256: str
    tasks: tuple[TaskRef, ...]
    lanes: tuple[LanePlan, ...]
    parallel: int

    @property
    def suites(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in self.tasks:
            counts[task.suite] = counts.get(task.suite, 0) + 1
        return counts

    @property
    def suite_label(self) -> str:
        """The suite key when one was chosen, else the task file's name."""
        return self.params.suite or self.task_file.rsplit("/", 1)[-1].removesuffix(".json")

    @property
    def lane_count(self) -> int:
        return len(self.tasks) * len(self.lanes)

    def spec_hash(self) -> str:
        """Canonical sha256 over the approved parameters, the task ids and the task file's content."""
        canonical = {
            "params": self.params.model_dump(mode="json", exclude={"dry_run"}),
            "task_file": self.task_file,
            "task_file_sha256": self.task_file_sha256,
            "tasks": sorted(t.task_id for t in self.tasks),
            "lanes": [lane.model_dump(mode="json") for lane in self.lanes],
            "parallel": self.parallel,
        }
        blob = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()
