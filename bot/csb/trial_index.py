"""Harbor's trial folders under `runs/`, indexed between searches and kept true to the disk.

The pairing guard asks, for every task of a one-lane run, which trial folders of the other lane may be that
task's. Listing every folder below `runs/` for that costs a year of results (a million trial folders) seconds
per request, mostly for the tasks never run, which are found nowhere. This index keeps, per folder, what the
last listing found (the folders to descend into; for the folders below a lane folder, the trial folders by the
keys a task's name can be looked up by) with the folder's stamp: its inode, device, mtime, ctime, link count
and size as `lstat` gives them. A search stats each folder it would walk and lists again only those whose
stamp changed; a folder gone (removed, or moved as a promotion moves a run to `runs/official`) drops out with
everything below it, and a folder moved in is listed where it now is. So a search costs a `stat` per folder
on the way (a few per run), not a listing of every trial.

A stamp can stay the same across a change: file times are as coarse as the clock ticks (a few milliseconds on
Linux, a second or two on some file systems), an inode number is reused as soon as it is freed. So a listing
is trusted later only if the folder had not changed for `racy_sec` when it was listed; until then the folder
is listed again at every search (git's rule for its index). A change after a trusted listing moves the
folder's ctime past the listing's time, since the time is read from the same clock; comparing ctime, inode and
link count too also catches a folder removed and made again with its old mtime set back.

Why in memory, per process: the stamps are one host's view of one mount (inode numbers and ctimes mean
nothing to a replica that mounts the checkout elsewhere), a database copy would save the listings but not the
stats every search needs anyway while adding a round trip per folder changed, and `bot/csb` sits above the
store. The price is that after a restart the first search lists everything once.

Memory is bounded: folders are a few objects per run; the trial folders are kept as one reference per lookup
key (about 8 bytes a trial), their names only for the `max_listings` folders read most recently (others are
listed again when a search needs their names), and result summaries for `max_summaries` files. Past
`max_entries` keys the index empties itself and keeps no more than one search's worth.

Symbolic links are never followed: a link among the folders (to a run, a lane, a job or a trial, inside
`runs/` or out of it) is not a folder of the tree, and a `result.json` that is a link is not read.

Blocking I/O and a lock: searches from several threads take turns.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar, cast

from bot.csb.trial_keys import folder_keys, query_keys
from bot.csb.trials import trial_task_part

RACY_SEC = 2.0  # a listing younger than this after the folder's last change is not trusted later
MAX_LISTINGS = 512  # folders whose trial names are kept (a run's lane folder holds one or a few)
MAX_SUMMARIES = 32_768  # result.json summaries kept
MAX_HINTS = 32_768  # trials last found for a task, model and lane
MAX_ENTRIES = 8_000_000  # lookup keys held (about 8 bytes each), some 7 years of results at a run a day

log = logging.getLogger(__name__)

T = TypeVar("T")


class Stamp(NamedTuple):
    """What `lstat` says of a folder or a file that changes when its entries or its content do (a tuple:
    compared at C speed, thousands of times a search)."""

    ino: int
    dev: int
    mtime_ns: int
    ctime_ns: int
    nlink: int
    size: int

    @classmethod
    def of(cls, st: os.stat_result) -> Stamp:
        return cls(st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink, st.st_size)


def trusted(stamp: Stamp, listed_at: float, racy_sec: float = RACY_SEC) -> bool:
    """Whether a listing (or a read) taken at `listed_at` may stand for the folder (file) while its stamp
    holds: only if it had not changed for `racy_sec` then, so a change within the same tick of the clock
    cannot leave the stamp as it was."""
    changed = max(stamp.mtime_ns, stamp.ctime_ns) / 1e9
    return listed_at - changed >= racy_sec


class _Folder:
    """One listing of a folder. A folder listed again is a new `_Folder`; the old one is marked dead, so
    the lookup lists that still hold it skip it."""

    __slots__ = ("dead", "dirs", "entries", "lane", "listed_at", "path", "stamp", "trusted")

    def __init__(self, path: str, stamp: Stamp, lane: str | None, listed_at: float, racy_sec: float) -> None:
        self.path = path
        self.stamp = stamp
        self.lane = lane  # the lane folder this one is (or is below); None for a folder above the lanes
        self.listed_at = listed_at
        self.trusted = trusted(stamp, listed_at, racy_sec)
        self.dirs: tuple[str, ...] = ()  # sub-folders that are not trials, the ones a search descends into
        self.entries = 0  # lookup keys filed for it
        self.dead = False


class _Lru(Generic[T]):
    """A dict that forgets its least recently used entries past `limit`."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: OrderedDict[str, T] = OrderedDict()

    def get(self, key: str) -> T | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: str, item: T) -> None:
        self._items[key] = item
        self._items.move_to_end(key)
        while len(self._items) > self._limit:
            self._items.popitem(last=False)

    def pop(self, key: str) -> None:
        self._items.pop(key, None)

    def clear(self) -> None:
        self._items.clear()


@dataclass
class IndexCounts:
    """What the index did, for the bench and the tests: folders statted and listed, files read."""

    stats: int = 0
    listings: int = 0
    reads: int = 0


class TrialIndex:
    """Trial folders below lane folders, by the keys a task is looked up by; see the module's docstring."""

    def __init__(
        self,
        *,
        now: Callable[[], float] = time.time,
        racy_sec: float = RACY_SEC,
        max_listings: int = MAX_LISTINGS,
        max_summaries: int = MAX_SUMMARIES,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        """`now`: the wall clock file times are compared with (the file system's, as the kernel stamps)."""
        self._now = now
        self._racy_sec = racy_sec
        self._max_entries = max_entries
        self._folders: dict[str, _Folder] = {}
        self._by_key: dict[str, list[_Folder]] = {}
        self._live_entries = 0
        self._dead_entries = 0
        self._names: _Lru[dict[str, tuple[str, ...]]] = _Lru(max_listings)
        self._summaries: _Lru[tuple[Stamp, bool, object]] = _Lru(max_summaries)
        self._hints: _Lru[tuple[str, str]] = _Lru(MAX_HINTS)
        self.lock = threading.Lock()  # one search at a time: a search reads and updates the index
        self.counts = IndexCounts()

    @property
    def entries(self) -> int:
        return self._live_entries

    def refresh(self, root: Path, lanes: frozenset[str], every_lane: frozenset[str]) -> None:
        """Bring the folders a search of `lanes` below `root` walks up to date: the folders above the lanes
        (not entering folders named for other lanes in `every_lane`, nor hidden or trial folders), and
        everything below the lane folders named in `lanes` but trial folders' insides."""
        if self._live_entries + self._dead_entries > self._max_entries:
            log.warning("trial index: over %d keys, starting again", self._max_entries)
            self.clear()
        stack: list[tuple[str, str | None]] = [(str(root), None)]
        while stack:
            path, lane = stack.pop()
            folder = self._visit(path, lane)
            if folder is None or not folder.dirs:
                continue
            prefix = _child(path, "")
            if lane is not None:
                stack += [(prefix + name, lane) for name in folder.dirs]
                continue
            for name in folder.dirs:
                if name in lanes:
                    stack.append((prefix + name, name))
                elif not (name in every_lane or name.startswith(".")):
                    stack.append((prefix + name, None))
        if self._dead_entries > max(self._live_entries, 1024):
            self._compact()

    def trials(self, root: Path, lanes: frozenset[str], task_id: str) -> Iterator[tuple[str, str]]:
        """(folder, name) of the trial folders below `root`'s lane folders named in `lanes` that may be this
        task's (a superset: the caller applies its own rule), as of the last `refresh` of them. Strings, not
        paths: a search may go through thousands."""
        below = str(root) + os.sep
        seen: set[str] = set()
        for key in query_keys(task_id):
            for folder in self._by_key.get(key, ()):
                if folder.dead or folder.lane not in lanes or not folder.path.startswith(below):
                    continue
                for name in self._names_of(folder).get(key, ()):
                    path = _child(folder.path, name)
                    if path not in seen:
                        seen.add(path)
                        yield folder.path, name

    def hinted(self, key: str, root: Path, lanes: frozenset[str]) -> tuple[str, str] | None:
        """The trial `remember`ed under `key` if it is still a trial folder the index lists below `root`'s
        lane folders named in `lanes` (its folder refreshed, not a link): where the last search found what
        this one looks for, to be checked first instead of the task's other trials, one by one."""
        trial = self._hints.get(key)
        if trial is None:
            return None
        folder = self._folders.get(trial[0])
        if folder is None or folder.lane not in lanes or not folder.path.startswith(str(root) + os.sep):
            return None
        try:
            st = os.lstat(_child(*trial))
        except OSError:
            return None
        return trial if stat.S_ISDIR(st.st_mode) else None

    def remember(self, key: str, trial: tuple[str, str]) -> None:
        self._hints.put(key, trial)

    def summary(self, path: str, read: Callable[[str], T]) -> T | None:
        """`read(path)` of a regular file (None for a link, a folder or nothing there), kept while the file's
        stamp holds and the read is trusted as a listing is."""
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        stamp = Stamp.of(st)
        key = path
        kept = self._summaries.get(key)
        if kept is not None and kept[0] == stamp and kept[1]:
            return cast(T, kept[2])  # made by `read`: one caller's kind of summary per file
        read_at = self._now()
        self.counts.reads += 1
        value = read(path)
        self._summaries.put(key, (stamp, trusted(stamp, read_at, self._racy_sec), value))
        return value

    def clear(self) -> None:
        for folder in self._folders.values():
            folder.dead = True
        self._folders.clear()
        self._by_key.clear()
        self._names.clear()
        self._summaries.clear()
        self._hints.clear()
        self._live_entries = self._dead_entries = 0

    # -- the folders ----------------------------------------------------------------------------------

    def _visit(self, path: str, lane: str | None) -> _Folder | None:
        """The folder's listing, made again if its stamp moved or it was not trusted; None if it is gone
        or not a folder (a link is not followed)."""
        self.counts.stats += 1
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        old = self._folders.get(path)
        if st is None or not stat.S_ISDIR(st.st_mode):
            if old is not None:
                self._drop(path)
            return None
        # A plain tuple equals the `Stamp` of the same values: the unchanged folder, thousands a search, is
        # told without making one.
        seen = (st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink, st.st_size)
        if old is not None and old.trusted and old.stamp == seen and old.lane == lane:
            return old
        return self._list(path, Stamp(*seen), lane, old)

    def _list(self, path: str, stamp: Stamp, lane: str | None, old: _Folder | None) -> _Folder | None:
        listed_at = self._now()
        self.counts.listings += 1
        try:
            with os.scandir(path) as entries:
                dirs, trials = _split(entries)
        except OSError:
            if old is not None:
                self._drop(path)
            return None
        folder = _Folder(path, stamp, lane, listed_at, self._racy_sec)
        folder.dirs = tuple(dirs)
        if old is not None:
            self._retire(old)
            for name in set(old.dirs) - set(folder.dirs):
                self._drop(_child(path, name))
        self._folders[path] = folder
        if lane is not None and trials:
            by_key = _by_key(trials)
            for key in by_key:
                self._by_key.setdefault(key, []).append(folder)
            folder.entries = len(by_key)
            self._live_entries += folder.entries
            self._names.put(path, by_key)
        return folder

    def _names_of(self, folder: _Folder) -> dict[str, tuple[str, ...]]:
        """The folder's trial names by key: kept from its listing, or listed again (the folder may have
        changed since; then these names are newer than its keys, as a scan racing a writer sees them)."""
        names = self._names.get(folder.path)
        if names is None:
            self.counts.listings += 1
            try:
                with os.scandir(folder.path) as entries:
                    names = _by_key(_split(entries)[1])
            except OSError:
                names = {}
            self._names.put(folder.path, names)
        return names

    def _drop(self, path: str) -> None:
        """A folder gone: it and every folder below it that was listed."""
        folder = self._folders.pop(path, None)
        if folder is None:
            return
        self._retire(folder)
        for name in folder.dirs:
            self._drop(_child(path, name))

    def _retire(self, folder: _Folder) -> None:
        folder.dead = True
        self._live_entries -= folder.entries
        self._dead_entries += folder.entries
        self._names.pop(folder.path)

    def _compact(self) -> None:
        """The lookup lists without the folders listed again or gone."""
        for key, folders in list(self._by_key.items()):
            alive = [folder for folder in folders if not folder.dead]
            if alive:
                self._by_key[key] = alive
            else:
                del self._by_key[key]
        self._dead_entries = 0


def _child(folder: str, name: str) -> str:
    """`os.path.join` for a name from a listing (never absolute): a search joins one per folder it walks,
    some 5,000 a year, and the plain concatenation costs about a quarter of `join`."""
    return folder + name if folder.endswith(os.sep) else folder + os.sep + name


def _split(entries: Iterator[os.DirEntry[str]]) -> tuple[list[str], list[str]]:
    """A listing's sub-folders (links never count) as (folders to descend into, trial folders)."""
    dirs: list[str] = []
    trials: list[str] = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            (trials if trial_task_part(entry.name) is not None else dirs).append(entry.name)
    return dirs, trials


def _by_key(trials: list[str]) -> dict[str, tuple[str, ...]]:
    by_key: dict[str, list[str]] = {}
    for name in trials:
        stem = trial_task_part(name)
        assert stem is not None  # `_split` kept only trial folders
        for key in folder_keys(stem):
            by_key.setdefault(key, []).append(name)
    return {key: tuple(names) for key, names in by_key.items()}
