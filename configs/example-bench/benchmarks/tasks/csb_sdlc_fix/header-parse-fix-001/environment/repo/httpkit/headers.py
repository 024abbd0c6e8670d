"""Parse one HTTP header line."""


def parse_header(line: str) -> tuple[str, str]:
    """`Name: value` → (name in lower case, value without surrounding whitespace)."""
    name, _, value = line.partition(":")
    return name, value
