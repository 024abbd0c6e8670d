"""The environment of one lane, variable for variable as CSB's harness gives it to Harbor.

Batch-wide (the harness sets these once for every lane): the checkout on PYTHONPATH, so Harbor can
import `agents.claude_baseline_agent`; USE_SUBSCRIPTION=true, so the agent uses the account in HOME;
DOCKER_BUILDKIT, REPO_ROOT, DEBUG_MODE; the variables the checkout's `.env.local` exports (sourcing
does not export the others); an empty or placeholder ANTHROPIC_API_KEY removed. Per lane: HOME,
BASELINE_MCP_TYPE, TASK_SOURCE_DIR (the original task folder, in both lanes), INSTRUCTION_VARIANT,
the MCP lane's SOURCEGRAPH_REPOS read from the Dockerfile it is built from, and the DAYTONA_LABEL_*
values. Harbor and the agent inherit all of this, and a task container must not see the bot's
secrets: the base is the allow-listed `ChildEnv` (see `child_env`), and `.env.local` may export
anything but the bot's own names (CSB_*, SLACK_*).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.csb.child_env import ChildEnv, is_bot_own, spawn_env
from bot.csb.regular_file import read_capped
from bot.domain.errors import InfraError

ENV_LOCAL = ".env.local"
PLACEHOLDER_API_KEY = "placeholder-key"
DEFAULT_VARIANT = "default"
_SHELL_OWN = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})  # bash sets these itself; not the file's exports
_SOURCEGRAPH_REPOS = re.compile(r'(?<=ENV SOURCEGRAPH_REPOS=")[^"]+')  # the harness's `grep -oP`
_SOURCE_TIMEOUT_SEC = 10
_DOCKERFILE_LIMIT = 4 * 1024 * 1024  # a Dockerfile is a few KiB; a link to a device is never read whole


@dataclass(frozen=True)
class LaneVars:
    """What differs between lanes: the account, the lane's config and where its task came from."""

    home: str
    mcp_type: str
    config: str
    task_source_dir: str  # absolute: the task folder under benchmarks/tasks, never a copy
    instruction_variant: str
    run_id: str  # the run folder's name
    suite: str
    task_id: str
    category: str
    sourcegraph_repos: str | None = None  # the MCP lane's; None leaves the inherited value alone


def lane_vars(
    repo: Path,
    *,
    home: str,
    config: str,
    mcp_type: str,
    mcp_lane: bool,
    task_path: str,
    suite: str,
    task_id: str,
    jobs_dir: str,
    dockerfile: Path | None,
) -> LaneVars:
    """One lane's variables, derived one way for the launch and for the dry run that shows it: the run
    folder and category come from the lane's `--jobs-dir` (`runs/<category>/<run folder>/<config>`).
    `dockerfile`: the Dockerfile the MCP lane will build, whose repos it is told; None where there is no
    such file yet (a dry run copies no task), which leaves the inherited value alone."""
    jobs = Path(jobs_dir)
    return LaneVars(
        home=home,
        mcp_type=mcp_type,
        config=config,
        task_source_dir=absolute(repo, task_path),
        instruction_variant=instruction_variant(config, mcp_lane=mcp_lane),
        run_id=jobs.parent.name,
        suite=suite,
        task_id=task_id,
        category=jobs.parts[1] if len(jobs.parts) > 2 else "",
        sourcegraph_repos=sourcegraph_repos(dockerfile) if mcp_lane and dockerfile is not None else None,
    )


def instruction_variant(full_config: str, *, mcp_lane: bool) -> str:
    """`default` for the baseline; `mcp`, or `mcp_scip` when the full config is a SCIP one."""
    if not mcp_lane:
        return DEFAULT_VARIANT
    return "mcp_scip" if "scip" in full_config else "mcp"


def sourcegraph_repos(dockerfile: Path) -> str:
    """Every `ENV SOURCEGRAPH_REPOS="…"` value of the Dockerfile, one per line; "" when none or unreadable."""
    try:
        text = read_capped(dockerfile, _DOCKERFILE_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(_SOURCEGRAPH_REPOS.findall(text))


def batch_env(base: ChildEnv, repo: Path, env_local: Mapping[str, str]) -> ChildEnv:
    """The variables every lane of a batch shares, in the harness's order (`.env.local` after its own)."""
    env = {
        "PYTHONPATH": f"{repo}:{base.get('PYTHONPATH', '')}",
        "USE_SUBSCRIPTION": "true",
        "REPO_ROOT": str(repo),
        "DOCKER_BUILDKIT": "1",
        "DEBUG_MODE": base.get("DEBUG_MODE", ""),
    }
    env.update((name, value) for name, value in env_local.items() if not is_bot_own(name))
    key = env.get("ANTHROPIC_API_KEY", base.get("ANTHROPIC_API_KEY", ""))
    placeholder = key in ("", PLACEHOLDER_API_KEY)
    return base.with_vars(env, drop=["ANTHROPIC_API_KEY"] if placeholder else [])


def lane_env(batch: ChildEnv, lane: LaneVars) -> ChildEnv:
    """The batch environment plus this lane's own variables."""
    env = dict(
        HOME=lane.home,
        BASELINE_MCP_TYPE=lane.mcp_type,
        TASK_SOURCE_DIR=lane.task_source_dir,
        INSTRUCTION_VARIANT=lane.instruction_variant,
        DAYTONA_LABEL_RUN_ID=lane.run_id,
        DAYTONA_LABEL_BENCHMARK=lane.suite,
        DAYTONA_LABEL_TASK_ID=lane.task_id,
        DAYTONA_LABEL_CONFIG=lane.config,
        DAYTONA_LABEL_CATEGORY=lane.category,
    )
    if lane.sourcegraph_repos is not None:
        env["SOURCEGRAPH_REPOS"] = lane.sourcegraph_repos
    return batch.with_vars(env)


class EnvLocal:
    """The exports of the checkout's `.env.local`, read by sourcing it as the harness does.

    Bash decides what the file exports (quotes, `export` after assignment, expansions), so the file is
    sourced in a clean bash and the exported variables compared; it is read again only when it changes.
    """

    def __init__(self, repo: Path) -> None:
        self._path = repo / ENV_LOCAL
        self._seen: tuple[float, int] | None = None
        self._exports: dict[str, str] = {}

    def exports(self, base: ChildEnv) -> dict[str, str]:
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            self._seen, self._exports = None, {}
            return {}
        key = (stat.st_mtime, stat.st_size)
        if key != self._seen:
            self._exports = _source(self._path, base)
            self._seen = key
        return dict(self._exports)


def _source(path: Path, base: ChildEnv) -> dict[str, str]:
    script = 'source "$1" >/dev/null 2>&1; env -0'
    try:
        done = subprocess.run(
            ["bash", "-c", script, "bash", str(path)],
            cwd=path.parent,
            env=spawn_env(base),
            capture_output=True,
            timeout=_SOURCE_TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfraError(f"cannot source {ENV_LOCAL}: {exc}") from exc
    exported: dict[str, str] = {}
    for item in done.stdout.split(b"\0"):
        name, sep, value = item.decode("utf-8", errors="replace").partition("=")
        if sep and name not in _SHELL_OWN and base.get(name) != value:
            exported[name] = value
    return exported


def absolute(repo: Path, task_path: str) -> str:
    """A task path as the harness passes it: absolute, under the checkout."""
    return task_path if os.path.isabs(task_path) else str(repo / task_path)
