"""Counted nouns, for every text the bot writes: "1 task", "2 tasks", never "1 tasks"."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """The count with its noun, singular for one ("1 task", "2 tasks"); `words` for irregular plurals.

    A verb that follows agrees by the same rule: `plural(n, "lane")` then `plural(n, "finishes",
    "finish")` without the count is what `agree` gives.
    """
    return f"{count} {agree(count, word, words)}"


def agree(count: int, word: str, words: str | None = None) -> str:
    """`word` for one, else `words` (default: `word` + "s"); a noun or verb without its count."""
    return word if count == 1 else (words or word + "s")
