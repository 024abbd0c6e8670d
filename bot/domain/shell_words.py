"""Split typed text into words as a POSIX shell would (`shlex.split`), in time linear in its length.

`shlex` builds each word one character at a time by string concatenation: a 900 KB word took it 10 s of
the event loop, during which no one else was answered. This scanner takes whole runs of plain
characters and whole quoted strings with one regular expression, and gives the same words and the same
errors as `shlex.split(text)` (tests/test_shell_words.py compares the two on generated text).
"""

from __future__ import annotations

import re

# shlex's `whitespace` is these four: other spaces are characters of a word, to shlex and here.
_SPACES = re.compile(r"[ \t\r\n]*")
_SPACE_RUN = re.compile(r"[ \t\r\n]+")
_PIECES = r"""[^ \t\r\n'"\\]+|'[^']*'|"(?:[^"\\]|\\[\s\S])*"|\\[\s\S]"""
_WORD = re.compile(f"(?:{_PIECES})+")
_PIECE = re.compile(
    r"""(?P<plain>[^ \t\r\n'"\\]+)"""
    r"""|'(?P<single>[^']*)'"""
    r'''|"(?P<double>(?:[^"\\]|\\[\s\S])*)"'''
    r"""|\\(?P<escaped>[\s\S])"""
)
_OPEN_DOUBLE = re.compile(r'"(?:[^"\\]|\\[\s\S])*')
# Inside double quotes a backslash escapes only `"` and itself; before anything else it stays.
_DOUBLE_ESCAPE = re.compile(r"\\([\s\S])")
NO_CLOSING_QUOTE = "No closing quotation"
NO_ESCAPED_CHARACTER = "No escaped character"


def split_words(text: str) -> list[str]:
    """The words of `text`; ValueError with shlex's message for an open quote or a trailing backslash.

    One match per word, and one per quoted or escaped piece of a word that has them."""
    if "'" not in text and '"' not in text and "\\" not in text:  # nothing to undo: a split in C
        bare = text.strip(" \t\r\n")
        return _SPACE_RUN.split(bare) if bare else []
    words: list[str] = []
    position = _SPACES.match(text).end()  # type: ignore[union-attr]
    while position < len(text):
        match = _WORD.match(text, position)
        end = position if match is None else match.end()
        if end < len(text) and text[end] not in " \t\r\n":
            raise ValueError(_open_end(text, end))  # the word runs into a quote or `\` left open
        word = text[position:end]
        if "'" in word or '"' in word or "\\" in word:
            word = _PIECE.sub(_piece, word)
        words.append(word)
        position = _SPACES.match(text, end).end()  # type: ignore[union-attr]
    return words


def _piece(match: re.Match[str]) -> str:
    kind, value = match.lastgroup, match.group(match.lastgroup or 0)
    if kind == "double":
        return _DOUBLE_ESCAPE.sub(lambda m: m[1] if m[1] in '"\\' else m[0], value)
    return value


def _open_end(text: str, position: int) -> str:
    """Why nothing matched at `position`: an open quote, or a backslash with nothing after it."""
    if text[position] == '"':
        inside = _OPEN_DOUBLE.match(text, position)
        assert inside is not None
        return NO_CLOSING_QUOTE if inside.end() == len(text) else NO_ESCAPED_CHARACTER
    return NO_CLOSING_QUOTE if text[position] == "'" else NO_ESCAPED_CHARACTER
