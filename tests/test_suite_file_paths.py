"""`--suite-file` paths the file system refuses: a name longer than it allows, a symlink loop. Each gets
one line saying what was wrong with the path, never "unexpected error"."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import copy_bench, running_bot
from store_reads import request_count

from bot.playground import REQUESTER

pytestmark = pytest.mark.slow

LONG_NAME = "benchmarks/suites/" + "n" * 300 + ".json"  # within the 500 characters a path may have


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (LONG_NAME, "cannot be opened: file name too long"),
        ("benchmarks/suites/loop.json", "cannot be opened: it is a symlink loop"),
        ("benchmarks/suites/through-loop/x.json", "cannot be opened: it is a symlink loop"),
    ],
)
async def test_a_suite_file_the_file_system_refuses_gets_one_line(
    tmp_path: Path, path: str, expected: str
) -> None:
    repo = copy_bench(tmp_path)
    (repo / "benchmarks/suites/loop.json").symlink_to("loop.json")
    (repo / "benchmarks/suites/through-loop").symlink_to("through-loop")
    async with running_bot(tmp_path, repo=repo) as h:
        assert (await h.driver.slash_command(REQUESTER, f"run --suite-file {path}")).status == 200
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert expected in reply, reply
        assert "unexpected" not in reply.lower()
        assert reply.splitlines()[0].startswith("task file `benchmarks/suites/"), reply
        assert len(reply) < 1_000
        assert await request_count(h.bot.store) == 0
