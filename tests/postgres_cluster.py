"""A throwaway PostgreSQL cluster for the tests: initdb in a temporary folder, one free loopback port,
fsync off, a fresh database per test (copied from a template already migrated), stopped at the end.

It runs the server binaries found on PATH or under /usr/lib/postgresql/<version>/bin. As root, initdb and
the server run as the `postgres` user (the server refuses root). Without the binaries the PostgreSQL
half of the suites is skipped, except under CI (`CI=true`), where that is an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

from bot.store.db import Store

TEMPLATE = "csb_template"


def server_bin() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def required() -> bool:
    """Under CI the PostgreSQL tests must run: a missing or broken server fails them, never skips."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """One server for the whole test session; `new_database()` hands each test its own database."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="csb-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0
        self._numbers = itertools.count(1)
        self.user = "postgres" if self._as_postgres else pwd.getpwuid(os.geteuid()).pw_name

    def _run(self, *argv: str) -> None:
        command = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")

    def start(self) -> None:
        if self._as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )
        log = str(self.folder / "log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")
        asyncio.run(self._make_template())

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://{self.user}@127.0.0.1:{self.port}/{database}"

    def _createdb(self, name: str, *template: str) -> None:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, *template, name)

    async def _make_template(self) -> None:
        self._createdb(TEMPLATE)
        store = Store(self.url(TEMPLATE))
        try:
            await store.create_tables()
        finally:
            await store.close()

    def new_database(self, *, migrated: bool = True) -> str:
        """A new database's URL: a copy of the migrated template, or (migrated=False) an empty one."""
        name = f"t{os.getpid()}_{next(self._numbers)}"
        self._createdb(name, *(["-T", TEMPLATE] if migrated else []))
        return self.url(name)

    def admit(self, url: str, allowed: bool) -> None:
        """Let a database take connections, or refuse them and cut the open ones: the database is away
        for the bot exactly as when its server is down or unreachable, while the test decides how long."""
        name = url.rsplit("/", 1)[1]
        statements = [f"ALTER DATABASE {name} ALLOW_CONNECTIONS {str(allowed).lower()}"]
        if not allowed:
            statements.append(
                f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
            )
        for statement in statements:
            self._run(
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            )

    def freeze(self, url: str) -> list[int]:
        """Stop (SIGSTOP) the server processes serving `url`'s open connections, which then answer
        nothing, as over a network cut or on a frozen host; new connections are served as usual.
        Returns their pids for `thaw`."""
        name = url.rsplit("/", 1)[1]
        query = f"SELECT pid FROM pg_stat_activity WHERE datname = '{name}'"
        command = [str(self.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user]
        done = subprocess.run(
            [*command, "-d", "postgres", "-At", "-c", query], capture_output=True, text=True, check=True
        )
        pids = [int(line) for line in done.stdout.split()]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        return pids

    @staticmethod
    def thaw(pids: list[int]) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def restart(self) -> None:
        """Restart the server on the same port: every connection is cut."""
        log = str(self.folder / "log")
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-l", log, "-w", "restart")

    def stop(self) -> None:
        """Stop the server if it runs, and remove its folder."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def bench_cluster() -> Cluster:
    """A started throwaway cluster for a bench's `--db postgres` (the caller stops it); exits with a
    one-line reason when PostgreSQL's server binaries are not installed."""
    bin_dir = server_bin()
    if bin_dir is None:
        raise SystemExit("--db postgres needs PostgreSQL's server binaries (Debian: postgresql)")
    cluster = Cluster(bin_dir)
    cluster.start()
    return cluster
