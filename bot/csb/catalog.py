"""The CSB checkout's task files: which one is the default, what is in it, and what a `/csb run` resolves to.

Blocking file I/O; callers run it in a thread. Parsed files are cached by path and stat stamp (inode,
mtime, ctime, size) because the bot resolves on every `/csb run` and before every run's first lane, and
the canonical suite file locates 264 task folders. The ctime is in the stamp because no tool can set it
back: an edit that keeps the size and restores the mtime still invalidates the cache.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from stat import S_ISREG

from bot.csb.configs import lane_plans, load_eval_matrix
from bot.csb.json_file import MIB
from bot.csb.regular_file import NotRegularFile, TooLarge, read_capped
from bot.csb.task_file import TaskFile, parse_task_file
from bot.domain.errors import InfraError, UserInputError
from bot.domain.mrkdwn import clip
from bot.domain.spec import RunParams, RunSpec, TaskRef

SUITES_DIR = "benchmarks/suites"
CANONICAL_SUITE_FILE = f"{SUITES_DIR}/csb-v2-dual264.json"
DEFAULT_SELECTION_FILE = "configs/selected_benchmark_tasks.json"
TASK_FILE_SIZE_LIMIT = 32 * MIB  # the canonical suite file of 264 tasks is about 60 KiB

_SHOWN_CHARS = 120  # a path echoed in a reply; the user typed up to PATH_CHARS
_PATH_HINT = f"task files live in the CSB checkout, e.g. {SUITES_DIR}/<id>.json or configs/<name>.json"


class Catalog:
    """Reads task files of one CSB checkout; paths in and out are relative to its root."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo.resolve()
        self._cache: dict[str, tuple[tuple[int, int, int, int], TaskFile]] = {}

    @property
    def repo(self) -> Path:
        return self._repo

    def suite_files(self) -> list[str]:
        """The suite files present, sorted; listed in errors so a typo shows what exists."""
        folder = self._repo / SUITES_DIR
        if not folder.is_dir():
            return []
        return sorted(f"{SUITES_DIR}/{path.name}" for path in folder.glob("*.json") if path.is_file())

    def default_task_file(self) -> str:
        """CSB's harness rule: the canonical suite file, else the only suite file, else the selection file."""
        if (self._repo / CANONICAL_SUITE_FILE).is_file():
            return CANONICAL_SUITE_FILE
        suite_files = self.suite_files()
        if len(suite_files) == 1:
            return suite_files[0]
        if (self._repo / DEFAULT_SELECTION_FILE).is_file():
            return DEFAULT_SELECTION_FILE
        if suite_files:
            raise UserInputError(
                f"no default task file: {SUITES_DIR} has {len(suite_files)} files and none is "
                f"{CANONICAL_SUITE_FILE.rsplit('/', 1)[-1]}; choose one: {', '.join(suite_files)}",
                hint="pass --suite-file <path>",
            )
        raise InfraError(
            f"the CSB checkout has no task file: neither {CANONICAL_SUITE_FILE} nor {SUITES_DIR}/*.json "
            f"nor {DEFAULT_SELECTION_FILE} exists"
        )

    def load(self, rel_path: str | None) -> TaskFile:
        """The parsed task file (the default one when `rel_path` is None), from the cache when unchanged."""
        rel = self._relative(rel_path) if rel_path else self.default_task_file()
        path = self._repo / rel
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            stat = None
        except OSError as exc:  # a name too long for the file system, a symlink loop, no permission
            raise UserInputError(
                f"task file `{clip(rel, _SHOWN_CHARS)}` cannot be opened: {_reason(exc)}", hint=_PATH_HINT
            ) from None
        if stat is None or not S_ISREG(stat.st_mode):
            listed = ", ".join(self.suite_files()) or "none"
            raise UserInputError(
                f"task file `{clip(rel, _SHOWN_CHARS)}` not found in the CSB checkout; suite files: {listed}",
                hint=_PATH_HINT,
            )
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)
        cached = self._cache.get(rel)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        task_file = parse_task_file(self._repo, rel, self._read(path, rel))
        self._cache[rel] = (stamp, task_file)
        return task_file

    def suites(self, rel_path: str | None = None) -> dict[str, int]:
        """Suite key → task count of a task file: the valid values of `--suite` for it."""
        return dict(self.load(rel_path).suites)

    def resolve(self, params: RunParams, default_parallel: int) -> RunSpec:
        """What these parameters launch against the checkout as it is now; UserInputError on typos."""
        if params.suite_file and params.selection_file:
            raise UserInputError("give --suite-file or --selection-file, not both")
        task_file = self.load(params.task_file)
        return RunSpec(
            params=params,
            task_file=task_file.path,
            task_file_sha256=task_file.sha256,
            tasks=_select(task_file, params.suite),
            lanes=lane_plans(params.full_config, params.mode, load_eval_matrix(self._repo)),
            parallel=params.parallel or default_parallel,
        )

    def missing_task_folders(self, spec: RunSpec) -> list[str]:
        """Task folders the spec names that are not in the checkout (checked now, never cached)."""
        return [task.path for task in spec.tasks if not (self._repo / task.path).is_dir()]

    def _relative(self, rel_path: str) -> str:
        """The path relative to the checkout root; refuses anything that leaves it (absolute or `..`)."""
        candidate = Path(rel_path)
        # `realpath`, not `resolve`: a symlink loop is left for `load` to report, not a RuntimeError here.
        full = Path(os.path.realpath(candidate if candidate.is_absolute() else self._repo / candidate))
        if not full.is_relative_to(self._repo):
            raise UserInputError(
                f"`{clip(rel_path, _SHOWN_CHARS)}` is outside the CSB checkout", hint=_PATH_HINT
            )
        return full.relative_to(self._repo).as_posix()

    @staticmethod
    def _read(path: Path, rel: str) -> bytes:
        try:
            return read_capped(path, TASK_FILE_SIZE_LIMIT)
        except TooLarge:
            raise UserInputError(
                f"task file `{rel}` is larger than {TASK_FILE_SIZE_LIMIT // MIB} MiB", hint=_PATH_HINT
            ) from None
        except NotRegularFile:
            raise UserInputError(f"task file `{rel}` is not a regular file", hint=_PATH_HINT) from None
        except OSError as exc:
            raise InfraError(f"cannot read task file {rel}: {exc}") from exc


def _reason(exc: OSError) -> str:
    """The OS's words for why a path cannot be opened, in lower case ("file name too long")."""
    if exc.errno == errno.ELOOP:
        return "it is a symlink loop"
    return (exc.strerror or type(exc).__name__).lower()


def _select(task_file: TaskFile, suite: str | None) -> tuple[TaskRef, ...]:
    """The file's tasks, narrowed to one suite key read from the file itself."""
    if suite is not None and suite not in task_file.suites:
        valid = ", ".join(sorted(task_file.suites))
        raise UserInputError(
            f"unknown suite `{suite}`; valid suites: {valid}", hint="omit --suite to run the whole file"
        )
    tasks = tuple(task for task in task_file.tasks if suite is None or task.suite == suite)
    if not tasks:
        where = f"suite `{suite}` of " if suite else ""
        raise UserInputError(f"no tasks in {where}{task_file.path}")
    return tasks
