"""The linear word splitter gives exactly what `shlex.split` gives, errors included, and its work grows
with the text's length, not with its square."""

from __future__ import annotations

import shlex
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.shell_words import split_words

# Every character shlex treats specially, plus spaces it does not (no-break, vertical tab).
TRICKY = st.text(alphabet=" \t\r\n'\"\\ab-=\u00a0\x0b", max_size=40)


def shlex_answer(text: str) -> list[str] | str:
    try:
        return shlex.split(text)
    except ValueError as exc:
        return str(exc)


def our_answer(text: str) -> list[str] | str:
    try:
        return split_words(text)
    except ValueError as exc:
        return str(exc)


@settings(max_examples=3000, deadline=None)
@given(TRICKY)
def test_the_words_and_errors_are_shlexs(text: str) -> None:
    assert our_answer(text) == shlex_answer(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("run --model 'a b' x", ["run", "--model", "a b", "x"]),
        ('a "b \\" \\\\ \\c" d', ["a", 'b " \\ \\c', "d"]),
        ("a '' b''c", ["a", "", "bc"]),
        ("a\\ b \\'", ["a b", "'"]),
    ],
)
def test_examples(text: str, words: list[str]) -> None:
    assert split_words(text) == shlex.split(text) == words


def cpu_seconds(text: str) -> float:
    """The least CPU time of three splits (CPU time of this thread: other processes do not count)."""
    spent = []
    for _ in range(3):
        start = time.thread_time()
        split_words(text)
        spent.append(time.thread_time() - start)
    return min(spent)


@pytest.mark.parametrize("unit", ["x", "'x' ", '"\\x', "\\x", "'", " \\ "])
def test_ten_times_the_text_is_about_ten_times_the_work(unit: str) -> None:
    """Linear: 10x the text costs about 10x (a quadratic scan costs 100x). The sizes stay inside what
    Slack sends (40,000 characters of command text); quotes are closed so each text is valid."""
    small, large = unit * 4_000, unit * 40_000
    small, large = (text + "'" if text.count("'") % 2 else text for text in (small, large))
    ratio = cpu_seconds(large) / max(cpu_seconds(small), 1e-6)
    assert ratio < 30, f"{ratio:.0f}x the work for 10x the text"
