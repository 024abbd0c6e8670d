"""CPU time of parsing the worst `/csb` texts Slack can send (40,000 characters), on the event loop's
thread: the splitter against `shlex.split`, and `/csb run`'s whole parse.

Run from the project root: `.venv/bin/python bench/parse_input.py`. The goal: no text Slack can send
costs more than 50 ms of parsing (a 40,000-character unknown flag once cost 1.9 s, a 900 KB `--model`,
which Slack no longer gets through, 10 s).
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.domain.command_line import parse_command, parse_run_args
from bot.domain.errors import UserInputError
from bot.domain.limits import COMMAND_TEXT_CHARS
from bot.domain.shell_words import split_words

N = COMMAND_TEXT_CHARS - 20
GOAL_SECONDS = 0.05
TEXTS = {
    "unknown flag": "--" + "x" * N,
    "long --model": "--model " + "x" * N,
    "long quoted --model": f"--model '{'x ' * (N // 2)}'",
    "many words": "k " * (N // 2),
    "many quoted words": "'k' " * (N // 4),
    "unknown subcommand": "r" * N,
}


def cpu(call: Callable[[], object]) -> float:
    """The least of three runs, in CPU seconds of this thread."""
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        with contextlib.suppress(UserInputError, ValueError):
            call()
        best = min(best, time.thread_time() - start)
    return best


def main() -> int:
    worst = 0.0
    print(f"{'text (' + format(N, ',') + ' characters)':34} {'shlex':>9} {'split_words':>12} {'parse':>9}")
    for name, text in TEXTS.items():
        old = cpu(lambda text=text: shlex.split(text))
        new = cpu(lambda text=text: split_words(text))
        whole = max(
            cpu(lambda text=text: parse_run_args(text)), cpu(lambda text=text: parse_command("run " + text))
        )
        worst = max(worst, whole)
        print(f"{name:34} {old * 1000:7.1f}ms {new * 1000:10.1f}ms {whole * 1000:7.1f}ms")
    met = worst <= GOAL_SECONDS
    verdict = "met" if met else "NOT met"
    print(f"goal {verdict}: worst parse {worst * 1000:.1f} ms (goal ≤ {GOAL_SECONDS * 1000:.0f} ms)")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
