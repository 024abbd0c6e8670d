"""The example bench's host-root environment, driven directly under Harbor's venv (tests/fixtures/host_root):
the Dockerfile replayed, commands in a private root and PID namespace, files in and out, and nothing of the
trial left on the host after it stops, after a command is cancelled, or after Harbor dies by SIGKILL."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from harness import EXAMPLE_BENCH
from real_harbor import harbor_or_skip
from waiting import until

pytestmark = pytest.mark.slow

PROBE = Path(__file__).resolve().parent / "fixtures" / "host_root" / "probe.py"


def probe(harbor: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    python = harbor.parent / "python"
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": str(EXAMPLE_BENCH), "TMPDIR": str(out)}
    return subprocess.Popen(
        [str(python), str(PROBE), str(out), *args], env=env, stdout=subprocess.PIPE, text=True
    )


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as exited)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_the_dockerfile_is_replayed_in_a_throwaway_root_that_leaves_nothing_behind(tmp_path: Path) -> None:
    harbor = harbor_or_skip()
    with probe(harbor, tmp_path) as process:
        output, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    facts = json.loads(output)
    workdir, env, copied_dir, copied_file, run_output, pid = facts["seen"]
    assert workdir == "/workspace"  # WORKDIR
    assert env == "hello world|1|legacy form value"  # ENV, quoted and in its older form
    assert copied_dir == "mod.py" and copied_file == "note"  # COPY of a folder's contents and of a file
    assert run_output == "touched"  # RUN, continuation lines and a comment among them
    assert int(pid) < 100  # a PID namespace of its own
    assert facts["probe_on_host"] is False  # the RUN wrote into /usr of the root, not of the host
    assert facts["timeout"] == "Command timed out after 1 seconds"
    # A trial cancelled while a command starts or runs stops at once, and the command dies with it.
    cancels = [
        (cancel["seconds"] is not None and cancel["seconds"] < 10, cancel["left"])
        for cancel in facts["cancelled"]
    ]
    assert cancels == [(True, [])] * 6, facts["cancelled"]
    assert facts["uploaded"] == (PROBE.parent / "environment" / "repo" / "pkg" / "mod.py").read_text()
    assert facts["downloaded"] == "0.5\n"
    asyncio.run(until(lambda: gone(facts["holder"]), "the root's holder to be gone after stop"))
    assert list(tmp_path.glob("harbor-host-root-*")) == []


async def test_the_root_dies_with_harbor(tmp_path: Path) -> None:
    harbor = harbor_or_skip()
    with probe(harbor, tmp_path, "die") as process:
        assert process.stdout is not None
        holder = json.loads(process.stdout.readline())["holder"]
        process.wait(timeout=60)
    await until(lambda: gone(holder), "the root's holder to die with Harbor")
