"""The `harbor run` of one lane of one task, its environment and its folders, exactly as CSB lays them out.

Kept byte-compatible with CSB's harness so runs the bot starts sit beside CSB's own under `runs/` and
CSB's scripts (status, manifest, promotion) read them unchanged.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.csb.child_env import ChildEnv

AGENT_IMPORT_PATH = "agents.claude_baseline_agent:BaselineClaudeCodeAgent"
DEFAULT_TIMEOUT_MULTIPLIER = 10
LAUNCHER = "csb-bot"  # `label_launcher` of the Daytona sandboxes it starts (CSB's: the script's name)

DAYTONA = "daytona"
DAYTONA_ENV_IMPORT_PATH = "ccb_harbor.daytona:GuardedDaytonaEnvironment"
JOB_NAME_PREFIX = "csb_"  # CSB's status tool walks job folders named so (as well as timestamped ones)

_MODEL_FAMILIES = ("opus", "sonnet", "haiku")  # CSB's order of checks
_MODEL_SHORT_CHARS = 8


@dataclass(frozen=True)
class HarborEnv:
    """Where Harbor builds the lane: `--env` and the override flags, as the harness passes them."""

    name: str = ""  # HARBOR_ENV; "" lets Harbor use its default (local Docker)
    memory_mb: str = ""  # DAYTONA_OVERRIDE_MEMORY
    storage_mb: str = ""  # DAYTONA_OVERRIDE_STORAGE

    @property
    def daytona(self) -> bool:
        return self.name == DAYTONA


@dataclass(frozen=True)
class LaunchConfig:
    """What every lane command shares: where CSB lives, which harbor, and the environment to start from
    (the allow-listed part of the bot's own, which every child process of the bot starts from)."""

    repo: Path
    harbor: str
    base_env: ChildEnv
    timeout_multiplier: int
    daytona: bool

    @property
    def harbor_env(self) -> HarborEnv:
        """`HARBOR_ENV` from the bot's environment as the harness reads it (the `daytona` setting implies
        it), with Daytona's memory and storage overrides."""
        name = self.base_env.get("HARBOR_ENV", "") or ("daytona" if self.daytona else "")
        return HarborEnv(
            name=name,
            memory_mb=self.base_env.get("DAYTONA_OVERRIDE_MEMORY", ""),
            storage_mb=self.base_env.get("DAYTONA_OVERRIDE_STORAGE", ""),
        )


def model_short(model: str) -> str:
    """CSB's short model name: `opus|sonnet|haiku`, else the lower-cased last segment without `-`/`_`,
    cut to 8 characters (`gpt-4o-mini` → `gpt4omin`)."""
    last = model.rsplit("/", 1)[-1].lower()
    family = next((name for name in _MODEL_FAMILIES if name in last), None)
    if family:
        return family
    return last.replace("-", "").replace("_", "")[:_MODEL_SHORT_CHARS] or "model"


def run_stamp(started: datetime) -> str:
    """The time in a run folder's name, as CSB's harness writes it: `YYYYmmdd_HHMMSS`."""
    return f"{started:%Y%m%d_%H%M%S}"


def run_dir_name(suite: str, model: str, stamp: str, run_id: str) -> str:
    """`<suite>_<short>_<stamp>_<run_id>`: CSB's run folder of one suite, plus the bot's run id so two
    runs started in the same second never share a folder. CSB's status tool finds the suite by the
    name's prefix, so the suite key comes first, unchanged. A dry run passes placeholders."""
    return f"{suite}_{model_short(model)}_{stamp}_{run_id}"


SUITE_SLOT = "{suite}"  # a run over several suites: its `run_dir` names its folders with the suite here


def run_folder_names(run_dir: str, suites: Iterable[str]) -> list[str]:
    """The run's folder names: one per suite (the `run_dir` of a run over several suites holds
    `SUITE_SLOT`, since each suite's folder starts with its key), so what is shown is a real folder."""
    if SUITE_SLOT not in run_dir:
        return [run_dir]
    return [run_dir.replace(SUITE_SLOT, suite) for suite in sorted(set(suites))]


def run_folders(category: str, run_dir: str, suites: Iterable[str]) -> list[str]:
    """The run's folders from the checkout root, `runs/<category>/<run dir>`, one per suite."""
    return [jobs_dir(category, name, "").rstrip("/") for name in run_folder_names(run_dir, suites)]


def jobs_dir(category: str, run_dir: str, lane_config: str) -> str:
    """Harbor's `--jobs-dir` for a lane, relative to the checkout root."""
    return f"runs/{category}/{run_dir}/{lane_config}"


def job_name(run_id: int | str, lane_id: int | str, attempt: int | str) -> str:
    """Harbor's `--job-name` for one attempt of one lane: unique, so lanes started in the same second in
    one jobs dir never collide (Harbor's default name is the time to the second, and the second lane
    would fail with FileExistsError). No `__`: CSB's status tool would take such a folder for a trial.
    A dry run passes placeholders."""
    return f"{JOB_NAME_PREFIX}r{run_id}_l{lane_id}_a{attempt}"


def lane_command(
    harbor: str,
    task_path: str,
    model: str,
    jobs_dir: str,
    *,
    job: str | None = None,
    env: HarborEnv = HarborEnv(),
    timeout_multiplier: int = DEFAULT_TIMEOUT_MULTIPLIER,
    labels: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The argv CSB's harness runs for one lane; run it from the checkout root.

    On Daytona the guarded environment and the `--ek` labels go first, as CSB's `harbor_run_guarded`
    puts them (`daytona_labels` builds them), so CSB's cost guard counts the sandbox as its own.
    """
    argv = [harbor, "run"]
    if env.daytona:
        argv += ["--environment-import-path", DAYTONA_ENV_IMPORT_PATH]
        for key, value in labels:
            argv += ["--ek", f"{key}={value}"]
    argv += [
        "--path", task_path,
        "--agent-import-path", AGENT_IMPORT_PATH,
        "--model", model,
        "--jobs-dir", jobs_dir,
        "-n", "1",
        "--timeout-multiplier", str(timeout_multiplier),
    ]  # fmt: skip
    if job:
        argv += ["--job-name", job]
    if env.name:
        argv += ["--env", env.name]
    if env.memory_mb:
        argv += ["--override-memory-mb", env.memory_mb]
    if env.storage_mb:
        argv += ["--override-storage-mb", env.storage_mb]
    return argv


def lane_argv(
    launch: LaunchConfig, task_path: str, model: str, jobs_dir: str, job: str, lane_env: Mapping[str, str]
) -> list[str]:
    """One lane attempt's argv in this deployment: the harness's command with the bot's Harbor, its
    environment and timeout multiplier, and on Daytona the sandbox labels read from the lane's
    environment. The engine launches it; a dry run prints it, so both show the same command."""
    env = launch.harbor_env
    return lane_command(
        launch.harbor,
        task_path,
        model,
        jobs_dir,
        job=job,
        env=env,
        timeout_multiplier=launch.timeout_multiplier,
        labels=daytona_labels(lane_env, model, job) if env.daytona else (),
    )


def daytona_labels(lane_env: Mapping[str, str], model: str, job: str | None) -> list[tuple[str, str]]:
    """CSB's ten `--ek` sandbox labels in its order, each only when non-empty, from the lane's environment."""
    pairs = [
        ("label_launcher", lane_env.get("DAYTONA_LABEL_LAUNCHER") or LAUNCHER),
        ("label_run_id", lane_env.get("DAYTONA_LABEL_RUN_ID", "")),
        ("label_benchmark", lane_env.get("DAYTONA_LABEL_BENCHMARK", "")),
        ("label_task_id", lane_env.get("DAYTONA_LABEL_TASK_ID", "")),
        ("label_config", lane_env.get("DAYTONA_LABEL_CONFIG", "")),
        ("label_job_name", job or ""),
        ("label_category", lane_env.get("DAYTONA_LABEL_CATEGORY", "")),
        ("label_model", model),
        ("label_mcp_type", lane_env.get("DAYTONA_LABEL_MCP_TYPE") or lane_env.get("BASELINE_MCP_TYPE", "")),
        ("task_source_dir", lane_env.get("TASK_SOURCE_DIR", "")),
    ]
    return [(key, value) for key, value in pairs if value]


def shell_line(argv: Sequence[str], env_overrides: Mapping[str, str]) -> str:
    """A copy-pasteable line for the card and logs: `BASELINE_MCP_TYPE=… harbor run …`."""
    prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in env_overrides.items())
    command = shlex.join(argv)
    return f"{prefix} {command}" if prefix else command
