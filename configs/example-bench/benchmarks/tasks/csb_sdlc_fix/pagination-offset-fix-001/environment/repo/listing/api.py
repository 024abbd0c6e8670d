"""The `GET /users?page=N` handler, reduced to its paging logic."""

from listing.pager import paginate

PER_PAGE = 3


def list_users(users: list[str], page: int = 1) -> dict:
    """Response body for one page of the user list."""
    result = paginate(users, page, PER_PAGE)
    return {"users": result.items, "page": result.number, "pages": result.total_pages}
