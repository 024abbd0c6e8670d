"""Which folders CSB's promotion and MANIFEST scripts see: run folders, config folders, task folders, suites.

`promote_run.py` and `generate_manifest.py` walk the same tree with slightly different rules, each kept
here under its script's name. Paths are CSB's repo-root ones (`runs/staging`, `runs/official`,
`runs/official/_raw`), as its operations guide says, not the relocated scripts' `parent.parent`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from bot.csb.trials import csb_task_folder

STAGING = "runs/staging"
OFFICIAL = "runs/official"
RAW = "_raw"
MANIFEST_NAME = "MANIFEST.json"
FLAGGED_TASKS = "flagged_tasks.json"
RESULT = "result.json"
TASK_METRICS = "task_metrics.json"

# Both scripts skip run folders (and promote_run.py also task folders) whose name contains one of these.
SKIP_PATTERNS = ("__broken_verifier", "validation_test", "archive", "__v1_hinted")
STAGING_SKIP_NAMES = frozenset({"archive", "_quarantine", "launch_logs"})  # discover_staging_runs
_BATCH = re.compile(r"^\d{4}-\d{2}-\d{2}__\d{2}-\d{2}-\d{2}$")

# generate_manifest.py's DIR_PREFIX_TO_SUITE, first match wins. Its full inline list is not in the rules
# read; these are its families: `csb_sdlc_<s>_`/`csb_org_<s>_` name their suite, `sdlc_<s>_`/`org_<s>_`
# the `csb_` one, `ccb_<s>_` and the bare legacy words (`understand_haiku_…`) the `ccb_` one.
_SUITE_PREFIXES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(csb_(?:sdlc|org)_[a-z0-9]+)_"), r"\1"),
    (re.compile(r"^((?:sdlc|org)_[a-z0-9]+)_"), r"csb_\1"),
    (re.compile(r"^(ccb_[a-z0-9]+)_"), r"\1"),
    (
        re.compile(
            r"^(build|debug|design|document|feature|fix|refactor|secure|test|understand|crossrepo|"
            r"largerepo|dibench|dependeval|locobench|pytorch|swebenchpro|tac|sweperf|k8sdocs|linuxflbench|"
            r"repoqa|codereview|nlqa|investigation|enterprise|governance|security|onboarding|mcp)_"
        ),
        r"ccb_\1",
    ),
)


def skipped(name: str) -> bool:
    return any(pattern in name for pattern in SKIP_PATTERNS)


def suite_of(run_folder: str) -> str | None:
    """The suite of a run folder by its name's prefix; None: the MANIFEST ignores the run."""
    for pattern, suite in _SUITE_PREFIXES:
        match = pattern.match(run_folder)
        if match:
            return match.expand(suite)
    return None


def official_runs_dir(repo: Path) -> Path:
    """`raw_runs_dir(runs/official)`: `runs/official/_raw` when it exists, else `runs/official`."""
    official = repo / OFFICIAL
    raw = official / RAW
    return raw if raw.is_dir() else official


def config_folders(run_dir: Path) -> list[Path]:
    """`discover_configs`: the run folder's sub-folders, sorted, without hidden, `_` and skipped names."""
    return [
        entry
        for entry in sorted(run_dir.iterdir())
        if entry.is_dir() and not entry.name.startswith((".", "_")) and not skipped(entry.name)
    ]


def promote_task_dirs(config_dir: Path) -> list[Path]:
    """`promote_run.py`'s `find_task_dirs`: layout v2 (batch timestamp folders of `__` task folders),
    v1 (task folders directly) and v3 (any other folder of `__` task folders); skipped names dropped."""
    found: list[Path] = []
    for entry in _dirs(config_dir):
        if skipped(entry.name):
            continue
        if _BATCH.match(entry.name):
            found.extend(
                child for child in _dirs(entry) if csb_task_folder(child.name) and not skipped(child.name)
            )
        elif csb_task_folder(entry.name):
            found.append(entry)
        else:
            found.extend(
                child for child in _dirs(entry) if csb_task_folder(child.name) and not skipped(child.name)
            )
    return found


def manifest_trial_dirs(config_dir: Path) -> Iterator[Path]:
    """`generate_manifest.py`'s `scan_config_dir`: a folder with `__` not starting `20` is a task folder;
    any other is a batch whose children not starting `20` are. Trials with an invalidation marker
    (a `__broken_verifier` file, or any file named `__invalid…`) are left out."""
    for entry in _dirs(config_dir):
        if csb_task_folder(entry.name) and not entry.name.startswith("20"):
            candidates = [entry]
        else:
            candidates = [child for child in _dirs(entry) if not child.name.startswith("20")]
        for trial in candidates:
            if not has_invalid_marker(trial):
                yield trial


def has_invalid_marker(trial: Path) -> bool:
    try:
        return any(
            child.is_file() and (child.name == "__broken_verifier" or child.name.startswith("__invalid"))
            for child in trial.iterdir()
        )
    except OSError:
        return False


def _dirs(folder: Path) -> list[Path]:
    try:
        return sorted(entry for entry in folder.iterdir() if entry.is_dir())
    except OSError:
        return []
