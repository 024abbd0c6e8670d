"""The pairing guard's trial index: kept between searches, it must answer as a full scan of the disk does.

Each change below is made on a real `runs/` tree between two searches of one kept index, and the kept
index's answer is compared with a fresh index's (which lists every folder it walks: the full scan), and
its listings with a plain walk of the disk. A kept index here trusts its listings (its clock says they
were taken a minute after the folders last changed), so only the folders' stamps can tell it that
something moved; the racy rule that guards listings taken too soon is tested on its own.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from csb_tree import build_tree, fixture_json, write_json

from bot.csb import Catalog, missing_counterparts
from bot.csb.trial_index import Stamp, TrialIndex, trusted
from bot.csb.trial_keys import COPY_KEY_CHARS, folder_keys, query_keys
from bot.csb.trials import HARBOR_NAME_LIMIT, short_task_name, trial_task_part
from bot.domain.spec import DEFAULT_MODEL, Mode, RunParams, RunSpec

DESIGN = [
    "camel-routing-arch-001",
    "django-orm-query-arch-001",
    "etcd-grpc-api-upgrade-001",
    "postgres-query-exec-arch-001",
]
CAMEL, DJANGO, ETCD, POSTGRES = DESIGN
MCP = "mcp-remote-direct"
JOB = "2026-02-23__17-58-13"
LATER = 60.0  # the kept index's clock: every listing taken a minute after the folder last changed


def _later() -> float:
    return time.time() + LATER


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "checkout")


@pytest.fixture
def spec(repo: Path) -> RunSpec:
    """A baseline-only run of the design suite: its counterparts are MCP trials."""
    params = RunParams(mode=Mode.BASELINE_ONLY, suite="csb_sdlc_design")
    return Catalog(repo).resolve(params, default_parallel=4)


def _trial(repo: Path, where: str, task_id: str, *, folder: str | None = None, **changes: Any) -> Path:
    """A clean trial (the real result.json, moved to `task_id`) at `runs/<where>/<trial folder>`."""
    data = fixture_json("result_trial_pass.json")
    data["task_name"] = task_id
    data["config"]["agent"]["model_name"] = DEFAULT_MODEL
    data.update(changes)
    name = folder or f"{task_id[:32]}__AbC1234"
    return write_json(repo, f"runs/{where}/{name}/result.json", data).parent


def _same(repo: Path, spec: RunSpec, index: TrialIndex, expected: list[str]) -> None:
    """The kept index answers as a full scan does, and as the test expects."""
    kept = missing_counterparts(repo, spec, index)
    scan = missing_counterparts(repo, spec)
    assert kept == scan == expected


# -- the kept index against the full scan, change after change ----------------------------------------


def test_adds_and_removals_of_trials_and_runs(repo: Path, spec: RunSpec) -> None:
    index = TrialIndex(now=_later)
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL)
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", DJANGO)  # into a job folder already listed
    _same(repo, spec, index, [ETCD, POSTGRES])
    _trial(repo, f"staging/run_b/{MCP}/{JOB}", ETCD)  # a new run
    _same(repo, spec, index, [POSTGRES])
    shutil.rmtree(repo / f"runs/staging/run_a/{MCP}/{JOB}/{CAMEL}__AbC1234")  # a trial removed
    _same(repo, spec, index, [CAMEL, POSTGRES])
    shutil.rmtree(repo / "runs/staging/run_b")  # a run removed
    _same(repo, spec, index, [CAMEL, ETCD, POSTGRES])
    _trial(repo, f"official/deep/er/run_c/{MCP}/{JOB}", POSTGRES)  # below groupings in official
    _same(repo, spec, index, [CAMEL, ETCD])


def test_renames_and_a_promotion_move(repo: Path, spec: RunSpec) -> None:
    index = TrialIndex(now=_later)
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL)
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", DJANGO)
    _same(repo, spec, index, [ETCD, POSTGRES])
    job = repo / f"runs/staging/run_a/{MCP}/{JOB}"
    (job / f"{CAMEL}__AbC1234").rename(job / f"{ETCD}__AbC1234")  # a trial renamed to another task's
    _same(repo, spec, index, [CAMEL, ETCD, POSTGRES])  # its result still names camel: it counts for none
    (repo / f"runs/staging/run_a/{MCP}").rename(repo / "runs/staging/run_a/baseline-local-direct")
    _same(repo, spec, index, DESIGN)  # now the same lane as the run: no counterpart
    (repo / "runs/staging/run_a/baseline-local-direct").rename(repo / f"runs/staging/run_a/{MCP}")
    _same(repo, spec, index, [CAMEL, ETCD, POSTGRES])
    (repo / "runs/official").mkdir(parents=True)
    (repo / "runs/staging/run_a").rename(repo / "runs/official/run_a")  # promotion moves the run
    _same(repo, spec, index, [CAMEL, ETCD, POSTGRES])
    (repo / "runs/official/run_a").rename(repo / "runs/official/.run_a")  # hidden: not searched
    _same(repo, spec, index, DESIGN)


def test_a_result_rewritten_in_place(repo: Path, spec: RunSpec) -> None:
    index = TrialIndex(now=_later)
    trial = _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL, finished_at=None)  # still being written
    _same(repo, spec, index, DESIGN)
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL)  # finished: the same file written again
    assert (trial / "result.json").is_file()
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])
    errored = {"exception_info": {"exception_type": "NonZeroAgentExitCodeError", "exception_message": "x"}}
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL, **errored)
    _same(repo, spec, index, DESIGN)


def _tick_past(path: Path, ctime_ns: int) -> None:
    """Touch `path` until the clock file times are read from has moved past `ctime_ns` (a few ms at
    most): the change that follows cannot share the old stamp's tick."""
    while os.lstat(path).st_ctime_ns <= ctime_ns:
        os.utime(path)


def test_a_folder_replaced_with_its_old_times(repo: Path, spec: RunSpec) -> None:
    """A job folder removed and made again, holding another task's trial, with the old folder's mtime and
    its parent's set back (as a file system with one-second times would leave them): the stamps still
    differ in ctime (and most often inode), and the kept index sees the new folder."""
    index = TrialIndex(now=_later)
    lane = repo / f"runs/staging/run_a/{MCP}"
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL)
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])
    old_lane, old_job = os.lstat(lane), os.lstat(lane / JOB)
    _tick_past(lane / JOB, old_job.st_ctime_ns)
    shutil.rmtree(lane / JOB)
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", DJANGO)
    os.utime(lane / JOB, ns=(old_job.st_atime_ns, old_job.st_mtime_ns))
    os.utime(lane, ns=(old_lane.st_atime_ns, old_lane.st_mtime_ns))
    assert os.lstat(lane / JOB).st_mtime_ns == old_job.st_mtime_ns
    assert os.lstat(lane).st_mtime_ns == old_lane.st_mtime_ns
    _same(repo, spec, index, [CAMEL, ETCD, POSTGRES])


def test_symlinks_are_never_followed(repo: Path, spec: RunSpec, tmp_path: Path) -> None:
    """Links out of `runs/` to clean trials (a run, a lane folder, a job folder, a trial folder, a
    result.json) are not counterparts, in the kept index and in the full scan."""
    index = TrialIndex(now=_later)
    outside = tmp_path / "outside"
    for task_id in DESIGN:
        _trial(outside, f"run/{MCP}/{JOB}", task_id)
    real_result = outside / f"runs/run/{MCP}/{JOB}/{POSTGRES}__AbC1234/result.json"
    _same(repo, spec, index, DESIGN)
    (repo / "runs/staging/run_a").mkdir(parents=True)
    (repo / "runs/staging/linked_run").symlink_to(outside / "runs/run", target_is_directory=True)
    (repo / f"runs/staging/run_a/{MCP}").symlink_to(outside / f"runs/run/{MCP}", target_is_directory=True)
    job = repo / f"runs/staging/run_b/{MCP}/{JOB}"
    job.parent.mkdir(parents=True)
    job.symlink_to(outside / f"runs/run/{MCP}/{JOB}", target_is_directory=True)
    trials = repo / f"runs/staging/run_c/{MCP}/{JOB}"
    trials.mkdir(parents=True)
    (trials / f"{CAMEL}__AbC1234").symlink_to(real_result.parent.parent / f"{CAMEL}__AbC1234")
    (trials / f"{POSTGRES}__AbC1234").mkdir()
    (trials / f"{POSTGRES}__AbC1234/result.json").symlink_to(real_result)
    _same(repo, spec, index, DESIGN)
    _trial(repo, f"staging/run_c/{MCP}/{JOB}", ETCD)  # a real one beside them counts
    _same(repo, spec, index, [CAMEL, DJANGO, POSTGRES])


def test_bounded_memory_gives_the_same_answers(repo: Path, spec: RunSpec) -> None:
    """Names kept for one folder only, summaries for one file, and an index that starts again past a few
    keys: slower, never wrong."""
    index = TrialIndex(now=_later, max_listings=1, max_summaries=1, max_entries=3)
    for n, task_id in enumerate(DESIGN[:3]):
        _trial(repo, f"staging/run_{n}/{MCP}/{JOB}", task_id)
        unfinished = f"{POSTGRES[:32]}__Other{n:02d}"
        _trial(repo, f"staging/run_{n}/{MCP}/{JOB}", POSTGRES, folder=unfinished, finished_at=None)
    for _ in range(3):
        _same(repo, spec, index, [POSTGRES])
    assert index.entries <= 3 * 2


# -- the listings against a plain walk of the disk ------------------------------------------------------


def _walk(root: Path, lanes: frozenset[str], every: frozenset[str], task_id: str) -> set[tuple[str, str]]:
    """What a search of `lanes` walks, listed from the disk: the trial folders below lane folders whose
    keys meet the task's."""
    wanted = query_keys(task_id)
    found: set[tuple[str, str]] = set()
    for current, dirs, _ in os.walk(root):
        lane_below = any(part in lanes for part in Path(current).relative_to(root).parts)
        keep = []
        for name in dirs:
            if os.path.islink(os.path.join(current, name)):
                continue
            stem = trial_task_part(name)
            if stem is not None:
                if lane_below and folder_keys(stem) & wanted:
                    found.add((current, name))
            elif lane_below or name in lanes or not (name in every or name.startswith(".")):
                keep.append(name)
        dirs[:] = keep
    return found


def test_listings_follow_random_changes_to_the_disk(tmp_path: Path) -> None:
    """Seeded random changes to a `runs/` tree (trials and job folders made, removed, renamed, runs moved
    between staging and official, lanes renamed, folders replaced with their old mtime), and after each
    the kept index lists what a walk of the disk finds, for every task."""
    rng = random.Random(31)
    lanes, every = frozenset({MCP}), frozenset({MCP, "baseline-local-direct"})
    tasks = [*DESIGN, "camel-routing-arch-001-v2", "mcp_camel-routing-arch-001_x1y2z3"]
    runs = tmp_path / "runs"
    index = TrialIndex(now=_later)
    for step in range(150):
        _random_change(rng, runs, tasks, step)
        for category in ("staging", "official"):
            root = runs / category
            index.refresh(root, lanes, every)
            for task_id in tasks:
                assert set(index.trials(root, lanes, task_id)) == _walk(root, lanes, every, task_id), step


def _random_change(rng: random.Random, runs: Path, tasks: list[str], step: int) -> None:
    category = rng.choice(["staging", "official"])
    run = runs / category / f"run_{rng.randrange(4)}"
    lane = run / rng.choice([MCP, MCP, "baseline-local-direct", "other"])
    job = lane / f"2026-01-0{rng.randrange(1, 3)}__00-00-00"
    action = rng.randrange(6)
    if action <= 1:  # a trial made (a copy's name now and then)
        task = rng.choice(tasks)
        name = f"mcp_{task}_ab12cd"[:HARBOR_NAME_LIMIT] if rng.random() < 0.3 else short_task_name(task)
        (job / f"{name}__T{step:06d}").mkdir(parents=True)
    elif action == 2 and job.is_dir():  # a trial or the whole job folder removed
        trials = sorted(job.iterdir())
        shutil.rmtree(trials[0] if trials and rng.random() < 0.5 else job)
    elif action == 3 and run.is_dir():  # a run moved to the other category (a promotion, or back)
        other = runs / ("official" if category == "staging" else "staging") / f"run_{step}"
        other.parent.mkdir(parents=True, exist_ok=True)
        run.rename(other)
    elif action == 4 and lane.is_dir():  # a lane folder renamed, to another lane's name now and then
        target = lane.with_name(rng.choice([MCP, "baseline-local-direct", ".hidden", "other"]))
        if not target.exists():
            lane.rename(target)
    elif action == 5 and job.is_dir():  # a job folder replaced, its mtime and its parent's set back
        old, parent = os.lstat(job), os.lstat(job.parent)
        _tick_past(job, old.st_ctime_ns)
        shutil.rmtree(job)
        (job / f"{short_task_name(rng.choice(tasks))}__R{step:06d}").mkdir(parents=True)
        os.utime(job, ns=(old.st_atime_ns, old.st_mtime_ns))
        os.utime(job.parent, ns=(parent.st_atime_ns, parent.st_mtime_ns))


# -- the racy rule, and the keys ------------------------------------------------------------------------


def test_a_listing_taken_too_soon_after_a_change_is_taken_again() -> None:
    stamp = Stamp(ino=1, dev=1, mtime_ns=100 * 10**9, ctime_ns=101 * 10**9, nlink=2, size=4096)
    assert not trusted(stamp, listed_at=101.0, racy_sec=2.0)  # within the same tick as the change
    assert not trusted(stamp, listed_at=102.9, racy_sec=2.0)  # the ctime, not the mtime, counts
    assert trusted(stamp, listed_at=103.0, racy_sec=2.0)


def test_a_fresh_folder_is_listed_again_until_its_change_is_old_enough(repo: Path, spec: RunSpec) -> None:
    """The kept index's clock reads the folder's own change time (as when the listing falls in the tick of
    the change): the same folder is listed at every search, until the clock is `racy_sec` past it."""
    trial = _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL)
    changed = max(os.lstat(path).st_ctime_ns for path in (trial.parent, trial, trial / "result.json")) / 1e9
    clock = [changed]
    index = TrialIndex(now=lambda: clock[0], racy_sec=2.0)
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])
    listed = index.counts.listings
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])
    assert index.counts.listings > listed  # nothing changed, but the listing was not trusted
    clock[0] = changed + 2.0
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])  # listed once more, now trusted
    listed, read = index.counts.listings, index.counts.reads
    _same(repo, spec, index, [DJANGO, ETCD, POSTGRES])
    assert (index.counts.listings, index.counts.reads) == (listed, read)  # and kept


@pytest.mark.parametrize(
    ("task_id", "folder"),
    [
        (CAMEL, CAMEL),
        ("kubernetes-scheduler-preemption-victim-selection-001", "kubernetes-scheduler-preemption-v"),
        ("kubernetes-scheduler-preemption_-001", "kubernetes-scheduler-preemption"),  # cut, `_` stripped
        (CAMEL, f"mcp_{CAMEL}_x1y2z3"[:HARBOR_NAME_LIMIT]),
        (CAMEL, f"sgonly_{CAMEL}"[:HARBOR_NAME_LIMIT].rstrip("_-")),
        ("a_b", "bl_a_b_x1y2z3"),  # a short id with `_` in it
        ("ab", "mcp_ab_x1y2z3"),
        ("Camel-Routing", "mcp_camel-routing_x1y2z3"),  # copies are lower-cased
        ("x" * 40, "mcp_" + "x" * 28),
        ("anything", "mcp_"),  # a copy's name cut to its prefix may be any task's
        ("mcp_tools-upgrade-and-migration-001", "mcp_tools-upgrade-and-migration-"),  # an id like a copy's
        ("mcp_", "mcp_"),
    ],
)
def test_a_trial_folder_is_filed_under_a_key_its_task_looks_up(task_id: str, folder: str) -> None:
    assert folder_keys(folder) & query_keys(task_id)


def test_keys_cover_every_folder_name_a_task_can_have() -> None:
    """For task ids of many lengths and shapes, every folder name Harbor may give a trial of it or of a
    copy of it (whole, cut, stripped, lower-cased) shares a key with the task, and a task's copy keys stay
    within the first `COPY_KEY_CHARS` characters."""
    rng = random.Random(7)
    alphabet = "abc-_0"
    for _ in range(3000):
        task_id = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 45))).strip("_") or "t"
        if rng.random() < 0.2:  # an id that itself starts as a copy's name does
            task_id = rng.choice(["mcp_", "sgonly_", "bl_"]) + task_id
        copy = f"{rng.choice(['mcp_', 'sgonly_', 'bl_'])}{task_id}_{rng.choice(['x1y2z3', 'ab12cd'])}".lower()
        for name in (task_id, task_id[:HARBOR_NAME_LIMIT], short_task_name(task_id), copy):
            for stem in {name, name[:HARBOR_NAME_LIMIT], name[:HARBOR_NAME_LIMIT].rstrip("_-")}:
                if stem:
                    assert folder_keys(stem) & query_keys(task_id), (task_id, stem)
        assert all(len(key) <= COPY_KEY_CHARS + 1 for key in query_keys(task_id) if key.startswith("c"))


def test_copies_of_a_task_share_their_keys() -> None:
    """A copy's folder name ends in random characters; its keys do not, so the index holds a key per task
    and not one per copy ever run."""
    keys = set()
    for n in range(500):
        keys |= folder_keys(f"mcp_{CAMEL}_{n:06d}"[:HARBOR_NAME_LIMIT])
    assert len(keys) <= 3


def test_the_trial_found_last_time_counts_only_while_a_search_would_find_it(
    repo: Path, spec: RunSpec, tmp_path: Path
) -> None:
    """A search checks first the trial it found for a task last time: not once its run is a link to the
    same files out of `runs/`, nor once the trial folder is a link, nor once its result changed."""
    index = TrialIndex(now=_later)
    run = repo / "runs/staging/run_a"
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", CAMEL)
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", DJANGO)
    _same(repo, spec, index, [ETCD, POSTGRES])
    moved = tmp_path / "moved_run"
    run.rename(moved)
    run.symlink_to(moved, target_is_directory=True)  # the same path, through a link
    _same(repo, spec, index, DESIGN)
    run.unlink()
    moved.rename(run)
    _same(repo, spec, index, [ETCD, POSTGRES])
    job = run / MCP / JOB
    (job / f"{CAMEL}__AbC1234").rename(tmp_path / "camel_trial")
    (job / f"{CAMEL}__AbC1234").symlink_to(tmp_path / "camel_trial", target_is_directory=True)
    _same(repo, spec, index, [CAMEL, ETCD, POSTGRES])
    _trial(repo, f"staging/run_a/{MCP}/{JOB}", DJANGO, finished_at=None)  # written again, unfinished
    _same(repo, spec, index, DESIGN)
