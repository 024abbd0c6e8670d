"""One of the checkout's own scripts run as CSB's tools run it: from the checkout's root, with the child
environment (never the bot's `CSB_*` or `SLACK_*`), no stdin, a time limit, and the last line it wrote
kept as what it said.

The after-batch scripts and the promotion's steps both run scripts this way; each decides what an exit
code means. A `stop` event ends a script early (its process is killed), for a caller that must stop
touching the checkout at once. Blocking; callers run it in a thread.
"""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bot.csb.child_env import ChildEnv, spawn_env

_POLL_SEC = 0.2  # how soon a set `stop` is seen while the script runs


@dataclass(frozen=True)
class ScriptRun:
    """What came of it: `code` is None when the script could not be run, was stopped or ran out of time
    (`last` then says why); else its exit code and the last non-blank line of its stderr (else stdout)."""

    code: int | None
    last: str


def run_script(
    repo: Path,
    argv: list[str],
    env: ChildEnv,
    *,
    timeout: float,
    tail: int,
    stop: threading.Event | None = None,
) -> ScriptRun:
    try:
        proc = subprocess.Popen(
            argv,
            cwd=repo,
            env=spawn_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return ScriptRun(None, str(exc)[:tail])
    with proc:
        try:
            out, err = _wait(proc, timeout, stop)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.communicate()
            return ScriptRun(None, str(exc)[:tail])
        except _Stopped:
            proc.kill()
            proc.communicate()
            return ScriptRun(None, f"stopped: {Path(argv[1] if len(argv) > 1 else argv[0]).name} was killed")
    lines = [line for line in (err or out).decode("utf-8", "replace").splitlines() if line.strip()]
    return ScriptRun(proc.returncode, lines[-1][:tail] if lines else "no output")


class _Stopped(Exception):
    pass


def _wait(proc: subprocess.Popen[bytes], timeout: float, stop: threading.Event | None) -> tuple[bytes, bytes]:
    """`communicate` within `timeout`, looking at `stop` every `_POLL_SEC` when there is one."""
    if stop is None:
        return proc.communicate(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        if stop.is_set():
            raise _Stopped
        left = deadline - time.monotonic()
        try:
            return proc.communicate(timeout=max(0.0, min(_POLL_SEC, left)))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout) from None
