"""Files of the checkout that are not regular files: a task.toml that is a FIFO (its `open` would wait for
a writer forever) or a link to `/dev/zero` (its read would never end). The card is still posted, at once,
and the bot reads no more than its cap."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest
from harness import copy_bench, running_bot
from test_e2e_run import card_text, request_card

from bot.csb.regular_file import NotRegularFile, TooLarge, read_capped

pytestmark = pytest.mark.slow

TASK_TOML = "benchmarks/tasks/csb_sdlc_fix/slugify-punctuation-fix-001/task.toml"
# Far longer than a card takes (well under a second); only a read that blocks reaches it.
BOUND_SEC = 60


def _release(fifo: Path) -> None:
    """Open the FIFO for writing, which lets a reader blocked in `open` go on (it then reads nothing);
    without a reader the open fails and there is nothing to release."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
async def test_a_task_toml_that_is_not_a_regular_file_never_holds_up_the_card(
    tmp_path: Path, kind: str
) -> None:
    repo = copy_bench(tmp_path)
    toml = repo / TASK_TOML
    toml.unlink()
    if kind == "fifo":
        os.mkfifo(toml)
    else:
        toml.symlink_to("/dev/zero")
    async with running_bot(tmp_path, repo=repo) as h:
        try:
            card = await asyncio.wait_for(request_card(h, "run csb_sdlc_fix"), BOUND_SEC)
        finally:
            if kind == "fifo":
                _release(toml)
        assert "CSB run request #1" in card_text(card)
        assert "slugify-punctuation-fix-001" not in "\n".join(h.ephemeral_texts())


def test_read_capped_reads_regular_files_only_and_at_most_the_cap(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        read_capped(fifo, 10)
    with pytest.raises(NotRegularFile):
        read_capped(tmp_path, 10)
    with pytest.raises(TooLarge):
        read_capped(_write(tmp_path / "big", 11), 10)
    assert read_capped(_write(tmp_path / "small", 10), 10) == b"x" * 10
    with pytest.raises(NotRegularFile):
        read_capped(Path("/dev/zero"), 10)


def _write(path: Path, size: int) -> Path:
    path.write_bytes(b"x" * size)
    return path
