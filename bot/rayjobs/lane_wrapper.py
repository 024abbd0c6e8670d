"""The entrypoint of a lane's Ray job: runs the lane command and turns Ray's stop into a local lane's.

Standard library only, Python 3.8 or newer, one file: the bot's package need not be installed on a Ray
worker, so `entrypoint.py` sends this file's source inside the job's entrypoint (`python3 -c`), and it
also runs as a plain file: `python3 lane_wrapper.py --cwd DIR --log FILE --grace SEC -- ARGV...`.

It starts ARGV in DIR with stdout and stderr appended to FILE (the lane's log under `runs/`), and exits
with the lane's exit code (128+N when a signal N ended it; 127 when it could not start), which Ray
reports as the job's `driver_exit_code`.

Stopping, as measured on Ray 2.60: `POST /api/jobs/<id>/stop` sends the signal named by the job's
`RAY_JOB_STOP_SIGNAL` (SIGTERM unless the job's runtime_env sets SIGINT) to the entrypoint and to each
of its descendants, waits `RAY_JOB_STOP_WAIT_TIME_S` (default 3 s; the job's runtime_env value is
honoured), then SIGKILLs the processes it had listed and marks the job STOPPED. The bot sets SIGINT and
a wait longer than its grace period, so Harbor gets SIGINT as from a local stop; this wrapper survives
the SIGINT, and when the grace period is over SIGKILLs its whole process group (Harbor and whatever it
started since the stop, which Ray's list would miss), itself included. The lane stays in the
entrypoint's process group so Ray's own clean-up (SIGKILL of that group when the job's supervisor dies,
e.g. with the head) reaches it too. Whatever ends the wrapper itself, its lane does not outlive it: on
Linux the lane is started with the parent-death signal SIGKILL, so a wrapper killed alone (a stop whose
SIGINT never reached it, Ray's SIGKILL of a list that missed the lane, the OOM killer) takes the lane with
it instead of leaving Harbor running, orphaned, with nothing left to stop it.
"""

# Annotations stay unevaluated (PEP 563), so `int | None` and `Popen[bytes]` cost Python 3.8 nothing.
from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from types import FrameType

# CPython can lose a SIGINT that lands while its interpreter starts (the local executor waits as long):
# a lane younger than this when the stop came gets one more SIGINT at this age.
SIGINT_NOT_BEFORE = 2.0
EXIT_NOT_STARTED = 127
_POLL = 0.1
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="lane_wrapper", description="run one lane for a Ray job")
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--grace", type=float, required=True, help="seconds from SIGINT to SIGKILL")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("no lane command after --")
    return args


class _Stop:
    """When the stop came (monotonic seconds), set by the signal handler."""

    at: float | None = None

    @classmethod
    def request(cls, signum: int, _frame: FrameType | None) -> None:
        if cls.at is None:
            cls.at = time.monotonic()
            print(f"lane_wrapper: {signal.Signals(signum).name} received, stopping the lane", flush=True)


def _take_stop_signals() -> None:
    """Ray blocks SIGINT in its processes unless told otherwise, and a blocked or ignored signal is
    inherited by the lane: unblock it and catch it here (a caught signal is default again after exec)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, _Stop.request)
    signal.signal(signal.SIGTERM, _Stop.request)


def _lead_own_group() -> None:
    """The final SIGKILL goes to the wrapper's process group: make sure that group is the lane's alone.
    Ray's entrypoint (`exec`) already leads its group; run by hand from a shell, the wrapper would not."""
    if os.getpgid(0) != os.getpid():
        os.setpgid(0, 0)


def _dies_with(parent: int) -> None:
    """In the lane's process, before it execs: SIGKILL when the wrapper (`parent`) dies, and die now if it
    already has (the signal is armed only for a parent still alive). Linux only; elsewhere a no-op."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(EXIT_NOT_STARTED)


def _start(args: argparse.Namespace) -> subprocess.Popen[bytes] | None:
    wrapper = os.getpid()
    with open(args.log, "ab") as log:
        try:
            return subprocess.Popen(
                args.command,
                cwd=args.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=lambda: _dies_with(wrapper),  # the wrapper has one thread: safe to run here
            )
        except OSError as exc:
            message = f"lane_wrapper: cannot start {args.command[0]} in {args.cwd}: {exc.strerror or exc}\n"
            log.write(message.encode())
            sys.stderr.write(message)
            return None


def _supervise(child: subprocess.Popen[bytes], grace: float) -> int:
    """Wait for the lane; after a stop, resend SIGINT to a lane too young to have seen it, and SIGKILL
    the process group when the grace period is over."""
    started = time.monotonic()
    resent = False
    while True:
        try:
            return child.wait(timeout=_POLL)
        except subprocess.TimeoutExpired:
            pass
        if _Stop.at is None:
            continue
        now = time.monotonic()
        if not resent and _Stop.at - started < SIGINT_NOT_BEFORE and now - started >= SIGINT_NOT_BEFORE:
            resent = True
            _signal(child.pid, signal.SIGINT)
        if now - _Stop.at >= grace:
            print(f"lane_wrapper: grace period of {grace:g} s over, SIGKILL", flush=True)
            os.killpg(os.getpgid(0), signal.SIGKILL)


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    _take_stop_signals()
    _lead_own_group()
    child = _start(args)
    if child is None:
        return EXIT_NOT_STARTED
    code = _supervise(child, args.grace)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
