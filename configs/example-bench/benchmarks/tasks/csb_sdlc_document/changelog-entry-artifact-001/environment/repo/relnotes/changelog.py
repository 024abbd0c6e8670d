"""One release's entry of CHANGELOG.md."""


def format_entry(version: str, date: str, items: list[str]) -> str:
    """The entry: a `## <version> (<date>)` heading, then one `- <item>` line per distinct item, sorted."""
    lines = [f"## {version} {date}"]
    lines += [f"- {item}" for item in items]
    return "\n".join(lines) + "\n"
