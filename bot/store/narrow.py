"""What the store knows at run time and SQLAlchemy's or SQLModel's types do not say, narrowed in one place.

Query expressions name columns through `sqlmodel.col(Model.field)`: SQLModel annotates a field with its
Python type (`Lane.state: LaneStatus`), so without it mypy takes `Lane.state == x` for a `bool`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import CursorResult, Result, Table
from sqlmodel import SQLModel


def table_of(model: type[SQLModel]) -> Table:
    """The Core table behind a table model, for statements run once per lane (executemany). SQLModel
    sets `__table__` when the class is made but does not declare it."""
    table = vars(model)["__table__"]
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table


def rowcount(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE matched. `AsyncSession.execute` is typed as returning a `Result`; for
    such a statement it is a `CursorResult`, which alone has a row count."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"no row count on a {type(result).__name__}: not an UPDATE or DELETE")
    return result.rowcount
