"""Which Dockerfile a lane is built from, and the task copy that swaps that variant in.

CSB's harness runs the MCP lane, and in artifact configs the baseline too, from a copy of the task folder
with the lane's variant copied over `environment/Dockerfile`: `Dockerfile.sg_only` (MCP, direct configs),
`Dockerfile.artifact_only` (MCP, artifact configs), `Dockerfile.artifact_baseline` (baseline, artifact
configs). The copy sits outside the results tree, named `<tmp>/mcp_<task>_<6>` or `<tmp>/bl_<task>_<6>` in
lower case, as the harness's `mktemp` names it: Harbor names the trial after that folder, so CSB's tools see
the same `task_name` either way. The copy is removed once the lane's process has ended (the harness removes
its copies when the whole batch is done; the bot's runs overlap, so it cleans up per lane).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.csb.paths import LaunchPaths
from bot.csb.regular_file import open_regular, read_capped
from bot.domain.errors import InfraError
from bot.domain.spec import LaneRole

ENVIRONMENT = "environment"
DOCKERFILE = "Dockerfile"
SG_ONLY = "Dockerfile.sg_only"
ARTIFACT_ONLY = "Dockerfile.artifact_only"
ARTIFACT_BASELINE = "Dockerfile.artifact_baseline"
NO_REPO_NOTE = "No local repositories are pre-checked out."  # invalid in artifact mode (harness preflight)
_SUFFIX_CHARS = 6
_INSTRUCTION_LIMIT = 4 * 1024 * 1024  # CSB's longest instruction.md is some 20 KiB


@dataclass(frozen=True)
class Variant:
    """The Dockerfile a lane needs (`required`) and the one swapped in when present (`swapped`)."""

    required: str
    swapped: str | None  # None: the task folder runs as it is
    prefix: str = ""  # the copy's name prefix: `mcp_` or `bl_`


def lane_variant(role: LaneRole | str, config: str) -> Variant:
    """The harness's rule for one lane of `config` (the lane's own config name)."""
    artifact = "artifact" in config
    if LaneRole(role) is LaneRole.BASELINE:
        return Variant(ARTIFACT_BASELINE, ARTIFACT_BASELINE, "bl_") if artifact else Variant(DOCKERFILE, None)
    if artifact:
        return Variant(ARTIFACT_ONLY, ARTIFACT_ONLY, "mcp_")
    if config.startswith("augment-local-"):  # needs only the Dockerfile, yet takes sg_only when it exists
        return Variant(DOCKERFILE, SG_ONLY, "mcp_")
    return Variant(SG_ONLY, SG_ONLY, "mcp_")


def variant_problems(repo: Path, task_path: str, lanes: Iterable[tuple[LaneRole | str, str]]) -> list[str]:
    """Why this task cannot run these lanes (missing folder, missing variant, artifact-invalid
    instruction); [] when it can. Any entry blocks the request, as it blocks the harness's batch."""
    folder = repo / task_path
    if not folder.is_dir():
        return ["task folder missing"]
    problems: list[str] = []
    for role, config in lanes:
        variant = lane_variant(role, config)
        required = variant.required
        names = dict.fromkeys(name for name in (required, variant.swapped, DOCKERFILE) if name is not None)
        leaving = [
            rel for rel in (ENVIRONMENT, *(f"{ENVIRONMENT}/{name}" for name in names)) if _leaves(folder, rel)
        ]
        if leaving:
            problems.append(f"{leaving[0]} is a link out of the task folder")
            continue
        if not (folder / "environment" / required).is_file():
            problems.append(f"no environment/{required}")
        if "artifact" in config and _says_no_repo(folder):
            problems.append(f"instruction.md says {NO_REPO_NOTE!r} (unfit for artifact mode)")
    return list(dict.fromkeys(problems))


def copy_path(role: LaneRole | str, config: str, task_id: str, marker: str, root: Path | None = None) -> Path:
    """Where this lane attempt's copy lives: `<tmp>/<prefix><task>_<6>`, lower-cased, the suffix derived
    from the attempt's marker so a restarted bot finds it again."""
    prefix = lane_variant(role, config).prefix
    suffix = hashlib.sha256(marker.encode()).hexdigest()[:_SUFFIX_CHARS]
    base = root if root is not None else Path(tempfile.gettempdir())
    name = f"{prefix}{task_id}_{suffix}".lower()
    if "/" in name or "\\" in name or "\x00" in name:  # a task id is one folder name, never a way out
        raise InfraError(f"refused task copy `{name}`: not one folder name")
    return base / name


def lane_task_path(paths: LaunchPaths, task_path: str, role: LaneRole | str, config: str, copy: Path) -> str:
    """The `--path` of the lane: a fresh copy at `copy` with the variant swapped in, or the task folder.

    A variant that is missing at launch (it was present at approval) leaves the task as it is, as the
    harness does after its warning; the agent then sees the task's own Dockerfile.
    """
    variant = lane_variant(role, config)
    source = paths.task_folder(task_path)  # a task folder never leads out of the checkout
    if variant.swapped is None or not (source / ENVIRONMENT / variant.swapped).is_file():
        return task_path
    for rel in (ENVIRONMENT, f"{ENVIRONMENT}/{variant.swapped}", f"{ENVIRONMENT}/{DOCKERFILE}"):
        if _leaves(source, rel):  # preflight refuses such a task; the checkout may have changed since
            raise InfraError(f"refused to copy `{task_path}`: its {rel} is a link out of the task folder")
    remove_copy(copy)
    shutil.copytree(source, copy, symlinks=True)  # links are copied as links, never followed
    _replace_file(source / ENVIRONMENT / variant.swapped, copy / ENVIRONMENT / DOCKERFILE)
    return str(copy)


def remove_copy(copy: Path) -> None:
    """Remove a lane's task copy; only folders named as copies are ever removed.

    Most lanes never had a copy, and every ending lane asks: one `stat` says so before the two paths
    are resolved (an `lstat` per component each)."""
    if not copy.name.startswith(("mcp_", "bl_")) or not copy.is_dir():
        return
    if copy.resolve().parent == copy.parent.resolve():
        shutil.rmtree(copy, ignore_errors=True)


def _leaves(folder: Path, rel: str) -> bool:
    """Whether `folder/rel`, its links followed, lies outside `folder` (a link out, or under one)."""
    base = os.path.realpath(folder)
    return not Path(os.path.realpath(folder / rel)).is_relative_to(base)


def _replace_file(source: Path, target: Path) -> None:
    """Put `source`'s bytes at `target` as a new regular file: a link at `target` is removed, never
    written through (the copy keeps the task's links as links, and one may lead out of the checkout)."""
    if target.parent.is_symlink():
        raise InfraError(f"refused to write `{target}`: its folder is a link")
    target.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    with open_regular(source) as reader, os.fdopen(os.open(target, flags, 0o644), "wb") as writer:
        shutil.copyfileobj(reader, writer)


def _says_no_repo(folder: Path) -> bool:
    if _leaves(folder, "instruction.md"):
        return False
    try:
        text = read_capped(folder / "instruction.md", _INSTRUCTION_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return False
    return NO_REPO_NOTE in text
