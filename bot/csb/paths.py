"""Every path the bot writes or deletes in a CSB checkout stays inside the run's own folder.

Task ids, task folders and lane config names come from files in the checkout (suite, selection and
eval_matrix files) and end up in paths the bot creates, moves and removes: the MCP lane's task copy,
an earlier attempt moved aside, a lane log. One `..` there must not reach outside the run. So each
such path is resolved (symlinks followed) and checked here, right before it is used.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath, PurePosixPath

from bot.domain.errors import InfraError

RUNS_DIR = "runs"


def inside(root: Path, path: Path) -> Path:
    """`path` resolved, when it lies strictly inside `root` (resolved too); InfraError otherwise."""
    return _within(root.resolve(), path, root)


def _within(base: Path, path: Path, root: Path) -> Path:
    """`inside` for a `root` already resolved as `base`. Resolved by `realpath` alone: `Path.resolve` adds
    a `stat` only to turn a symlink loop into a RuntimeError, and such a path fails where it is used."""
    resolved = Path(os.path.realpath(path))
    if resolved == base or not resolved.is_relative_to(base):
        raise InfraError(f"refused to write `{path}`: it leaves `{root}`")
    return resolved


def run_folder(repo: Path, jobs_dir: str) -> Path:
    """`<checkout>/runs/<category>/<run dir>`, the folder a lane of that run may write in.

    Taken from the lane's jobs dir (`runs/<category>/<run dir>/<lane config>`), whose shape is checked
    rather than trusted: a config name such as `../../x` would otherwise widen the allowed folder.
    """
    parts = PurePosixPath(jobs_dir).parts
    if len(parts) != 4 or parts[0] != RUNS_DIR or any(part in (".", "..") for part in parts):
        raise InfraError(f"refused jobs dir `{jobs_dir}`: not runs/<category>/<run dir>/<lane config>")
    folder = inside(repo / RUNS_DIR, repo.joinpath(*parts[:3]))
    inside(folder, repo / jobs_dir)
    return folder


def lane_path(repo: Path, jobs_dir: str, path: PurePath | str) -> Path:
    """A path a lane's files go to (relative to the checkout or absolute), checked against its run folder."""
    return inside(run_folder(repo, jobs_dir), repo / path)


class LaunchPaths:
    """The checks above for one batch of lane launches, each shared folder resolved once.

    Resolving follows every component with an `lstat`: a launch of thirty lanes resolved the checkout and
    the same few run folders some two hundred times, between lanes ending and their slots filling again.
    Each lane's own path is still resolved when it is asked for, right before its use; only folders that
    every lane of the batch shares are resolved once, moments before. Use one per batch, never longer.
    A lane's path is resolved from its shared folder on (`_below`), not from `/` again.
    """

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._checkout: Path | None = None
        self._run_folders: dict[str, tuple[Path, Path]] = {}  # jobs dir: (its run folder, resolved)

    def task_folder(self, task_path: str) -> Path:
        """A task folder, resolved, when it lies inside the checkout (as `inside(repo, repo / task_path)`)."""
        if self._checkout is None:
            self._checkout = self.repo.resolve()
        return _below(self._checkout, self.repo, self.repo / task_path, self.repo)

    def lane_path(self, jobs_dir: str, path: Path | str) -> Path:
        """As `lane_path(repo, jobs_dir, path)`."""
        folders = self._run_folders.get(jobs_dir)
        if folders is None:
            resolved = run_folder(self.repo, jobs_dir)  # checks the jobs dir's shape, then resolves
            parts = PurePosixPath(jobs_dir).parts
            folders = self._run_folders[jobs_dir] = (self.repo.joinpath(*parts[:3]), resolved)
        folder, resolved = folders
        return _below(resolved, folder, self.repo / path, resolved)


def _below(base: Path, folder: Path, path: Path, root: Path) -> Path:
    """`_within(base, path, root)` for a `folder` already resolved as `base`, walking only the part of
    `path` below `folder`: while no component of it is a link (or `..`), `realpath` would have returned
    `base` joined with that part, having `lstat`ed the same components and every one of `base`'s again.
    On the first link, `..`, or a path not under `folder`, the whole path is resolved as `_within` does."""
    rel = os.fspath(path).removeprefix(os.fspath(folder))
    if rel == os.fspath(path) or not rel.startswith(os.sep):
        return _within(base, path, root)
    walked = os.fspath(base)
    exists = True
    for part in rel.split(os.sep):
        if part in ("", "."):
            continue
        if part == "..":
            return _within(base, path, root)
        walked = os.path.join(walked, part)
        if exists:  # below a missing name nothing exists; realpath keeps the rest as written too
            try:
                if stat.S_ISLNK(os.lstat(walked).st_mode):
                    return _within(base, path, root)
            except OSError:
                exists = False
    if walked == os.fspath(base):
        raise InfraError(f"refused to write `{path}`: it leaves `{root}`")
    return Path(walked)
