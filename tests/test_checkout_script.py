"""One of the checkout's scripts run as the bot runs them all (`bot/csb/checkout_script.py`): real child
processes; what they said (the last line), their exit code, and a script stopped part way being killed."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from waiting import until

from bot.csb.checkout_script import ScriptRun, run_script
from bot.csb.child_env import child_environ
from bot.executors.processes import process_alive

ENV = child_environ({**os.environ, "SLACK_BOT_TOKEN": "xoxb-not-for-children"})


def _script(repo: Path, body: str) -> list[str]:
    (repo / "script.py").write_text(body)
    return ["python3", "script.py"]


def test_the_last_line_of_stderr_else_stdout_and_the_exit_code(tmp_path: Path) -> None:
    argv = _script(tmp_path, "import os, sys\nprint('first\\nlast out')\nsys.exit(3)\n")
    assert run_script(tmp_path, argv, ENV, timeout=60, tail=200) == ScriptRun(3, "last out")
    body = "import os, sys\nprint(os.environ.get('SLACK_BOT_TOKEN', 'none'), file=sys.stderr)\n"
    ran = run_script(tmp_path, _script(tmp_path, body), ENV, timeout=60, tail=200)
    assert (ran.code, ran.last) == (0, "none")  # the bot's own secrets never reach a script
    missing = run_script(tmp_path, ["/nonexistent/python3"], ENV, timeout=60, tail=200)
    assert missing.code is None and "No such file" in missing.last


async def test_a_script_stopped_part_way_is_killed(tmp_path: Path) -> None:
    argv = _script(tmp_path, "import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(600)\n")
    stop = threading.Event()
    running = asyncio.create_task(
        asyncio.to_thread(run_script, tmp_path, argv, ENV, timeout=900, tail=200, stop=stop)
    )
    try:
        pid_file = tmp_path / "pid"
        await until(lambda: pid_file.is_file() and pid_file.read_text() != "", "the script to start")
        pid = int(pid_file.read_text())
        assert process_alive(pid)
        stop.set()
        assert await running == ScriptRun(None, "stopped: script.py was killed")
        assert not process_alive(pid)
    finally:
        stop.set()
        await asyncio.gather(running, return_exceptions=True)
