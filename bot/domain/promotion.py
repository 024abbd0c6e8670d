"""What a promotion from `runs/staging` to `runs/official` would do, as typed records the card shows.

Computed by `bot.csb.promotion` with CSB's own rules (`promote_run.py`'s gates, `generate_manifest.py`'s
MANIFEST, `quarantine_invalid_tasks.py`'s rule); only views turn them into words. Each verdict keeps the
vocabulary of the CSB tool it comes from (MANIFEST `passed|failed|errored`, validate_task_run's severities).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

MAX_WARNINGS_DEFAULT = 10  # promote_run.py's --max-warnings default
FIRST_FLAGGED = 5  # how many flagged tasks a gate lists


class GateName(StrEnum):
    """`promote_run.py`'s `check_gates`, in its order, then its task_metrics extraction."""

    VALIDATION_ERROR = "validation_error"
    NO_TASKS = "no_tasks"
    CRITICALS = "criticals"
    MISSING_RESULTS = "missing_results"
    WARNINGS = "warnings"
    METRICS_EXTRACTION = "metrics_extraction"


class FlaggedTask(BaseModel):
    """One flag of `flagged_tasks.json` (validate_task_run.py's `{rule, severity, message, task_id}`)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    rule: str
    severity: str
    message: str


class FlagSource(StrEnum):
    REUSED = "reused"  # an existing `<config>/flagged_tasks.json`, as promote_run.py reuses it
    COMPUTED = "computed"  # none there: the bot applied validate_task_run.py's rules itself


class ConfigFlags(BaseModel):
    """The flag counts of one config folder and where they came from (an old file is shown with its age)."""

    model_config = ConfigDict(frozen=True)

    config: str
    source: FlagSource
    age_seconds: float | None = None  # of a reused flagged_tasks.json
    critical_count: int = 0
    warning_count: int = 0
    info_count: int = 0
    flags: tuple[FlaggedTask, ...] = ()


class Gate(BaseModel):
    """One gate: failed or not, its count, and the first tasks it flagged."""

    model_config = ConfigDict(frozen=True)

    name: GateName
    failed: bool
    count: int = 0
    limit: int | None = None  # max_warnings for the warnings gate
    detail: str = ""  # the validation error, or the count of the total (`x/y`)
    first: tuple[FlaggedTask, ...] = ()


class FolderCheck(BaseModel):
    """`validate_run` of one run folder, plus the tasks lacking `task_metrics.json`."""

    model_config = ConfigDict(frozen=True)

    folder: str
    error: str | None = None
    configs: tuple[ConfigFlags, ...] = ()
    total_tasks: int = 0
    tasks_with_results: int = 0
    missing_results: tuple[str, ...] = ()
    missing_metrics: tuple[str, ...] = ()
    extraction_problem: str | None = None  # why missing task_metrics.json cannot be extracted

    @property
    def critical_count(self) -> int:
        return sum(config.critical_count for config in self.configs)

    @property
    def warning_count(self) -> int:
        return sum(config.warning_count for config in self.configs)


class GateReport(BaseModel):
    """The gates of one run folder as `check_gates` decides them; `blocked` ignores `--force`."""

    model_config = ConfigDict(frozen=True)

    folder: str
    gates: tuple[Gate, ...]

    @property
    def blocked(self) -> bool:
        return any(gate.failed for gate in self.gates)

    @property
    def failed(self) -> tuple[Gate, ...]:
        return tuple(gate for gate in self.gates if gate.failed)


class EntryChange(StrEnum):
    ADDED = "added"  # no official entry for this (suite, config, task) before
    REPLACED = "replaced"  # the promoted trial takes the entry's place
    KEPT = "kept"  # an older result with agent output beats the promoted one without


class TaskResult(BaseModel):
    """One MANIFEST task entry's verdict: status, reward and the run folder it came from."""

    model_config = ConfigDict(frozen=True)

    status: str
    reward: float
    run_dir: str = ""


class TaskChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str  # `<suite>/<config>`
    task: str
    change: EntryChange
    before: TaskResult | None = None
    after: TaskResult | None = None

    @property
    def better(self) -> bool | None:
        """Whether a replacement raises the reward (None when nothing is compared)."""
        if self.change is not EntryChange.REPLACED or self.before is None or self.after is None:
            return None
        if self.after.reward == self.before.reward:
            return None
        return self.after.reward > self.before.reward


class RunSummary(BaseModel):
    """One `runs["<suite>/<config>"]` entry's figures."""

    model_config = ConfigDict(frozen=True)

    task_count: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    mean_reward: float = 0.0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.task_count if self.task_count else None


class KeyChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    before: RunSummary | None
    after: RunSummary


class ManifestDiff(BaseModel):
    """What regenerating the MANIFEST with the run in `runs/official` changes, by the MANIFEST's rules."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[TaskChange, ...] = ()
    keys: tuple[KeyChange, ...] = ()

    def of(self, change: EntryChange) -> tuple[TaskChange, ...]:
        return tuple(item for item in self.tasks if item.change is change)


class QuarantineCandidate(BaseModel):
    """A task `quarantine_invalid_tasks.py`'s rule sets aside (every config of it moves together)."""

    model_config = ConfigDict(frozen=True)

    folder: str
    config: str
    task: str
    trial_dir: str  # relative to the run folder
    mcp_calls: int | None  # None: no trace to read, which CSB's `or 0` counts as zero
    extended: bool  # a current lane, which CSB's script (sourcegraph_full only) does not check


class Destination(BaseModel):
    """Where a run folder goes, by promote_run.py's rule; `collision` set when it already exists there."""

    model_config = ConfigDict(frozen=True)

    folder: str
    path: str  # relative to the checkout: runs/official[/_raw]/<folder>[__promoted_<stamp>]
    collision: bool = False
    forced_suffix: bool = False


class PromoteConfig(BaseModel):
    """The `[promote]` section of the bot's config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_warnings: int = Field(default=MAX_WARNINGS_DEFAULT, ge=0)  # promote_run.py's --max-warnings


class FolderRefusal(StrEnum):
    """Why a run folder cannot be promoted at all."""

    OUT_OF_RUNS = "out_of_runs"  # it resolves outside the checkout's runs/
    LINK = "link"  # the folder is a symlink
    MISSING = "missing"  # not in runs/staging (deleted or moved)


class FolderPreview(BaseModel):
    """One run folder: its gates, where it would go and what quarantine would set aside; or why not."""

    model_config = ConfigDict(frozen=True)

    folder: str
    refusal: FolderRefusal | None = None
    destination: Destination | None = None
    gates: GateReport | None = None
    configs: tuple[ConfigFlags, ...] = ()  # where each config's flag counts came from
    quarantine: tuple[QuarantineCandidate, ...] = ()

    @property
    def blocked(self) -> bool:
        return (
            self.refusal is not None
            or (self.gates is not None and self.gates.blocked)
            or (self.destination is not None and self.destination.collision)
        )


class PromotionPreview(BaseModel):
    """What `/csb promote <run>` shows: CSB's dry run per folder, with the MANIFEST diff it would make.

    `digest` names what was shown (the run folders' files and the MANIFEST): an approval made on one
    digest does not hold for another."""

    model_config = ConfigDict(frozen=True)

    run_id: int
    folders: tuple[FolderPreview, ...]
    diff: ManifestDiff = ManifestDiff()
    manifest_problem: str | None = None
    manifest_entries: int | None = None  # official tasks in the MANIFEST now (None: no MANIFEST yet)
    max_warnings: int = MAX_WARNINGS_DEFAULT
    digest: str = ""

    @property
    def blocked(self) -> bool:
        return self.manifest_problem is not None or any(folder.blocked for folder in self.folders)


class OfficialLine(BaseModel):
    """One `runs["<suite>/<config>"]` of the MANIFEST, as `/csb official` lists it."""

    model_config = ConfigDict(frozen=True)

    suite: str
    config: str
    model: str
    timestamp: str
    figures: RunSummary
    last_run_dir: str | None = None  # of the newest trial in run_history
    reviewer: str | None = None  # from that folder's triage.json (CSB's record of who approved)
    reviewed_at: str | None = None
