"""Split result lists into pages. Page numbers start at 1, as in the public API."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    """One page of results plus what a client needs to render page links."""

    items: list
    number: int
    total_pages: int


def total_pages(count: int, per_page: int) -> int:
    """Number of pages needed to show ``count`` items, ``per_page`` at a time."""
    return count // per_page


def paginate(items: list, page: int, per_page: int) -> Page:
    """Return page number ``page`` (1-based) of ``items``."""
    start = page * per_page
    return Page(items[start : start + per_page], page, total_pages(len(items), per_page))
