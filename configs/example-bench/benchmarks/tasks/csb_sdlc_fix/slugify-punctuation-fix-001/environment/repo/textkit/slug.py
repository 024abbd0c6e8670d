"""URL slugs for article titles."""


def slugify(title: str) -> str:
    """Return a lowercase, hyphen-separated, ASCII-only slug for ``title``."""
    return title.lower().replace(" ", "-")
