"""The drawing process ends with the bot, even when the bot is SIGKILLed and runs no exit code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# A bot stand-in: start the drawing process, say its pid, then wait to be killed.
PARENT = """
import asyncio, os, time
from bot.slack.drawing import in_worker

async def main() -> None:
    print(await in_worker(os.getpid), flush=True)
    time.sleep(300)

if __name__ == "__main__":
    asyncio.run(main())
"""
PATIENCE = 60.0


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out after {PATIENCE:.0f} s waiting for {what}"
        time.sleep(0.05)


def test_a_sigkilled_bot_leaves_no_drawing_process(tmp_path: Path) -> None:
    script = tmp_path / "bot_standin.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, cwd=tmp_path)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert alive(worker) and worker != parent.pid
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        wait_for(lambda: not alive(worker), f"drawing process {worker} to end with its bot")
    finally:
        parent.kill()
        parent.wait()
