"""Seconds between two timestamp columns, worked out by the database, so a query over thousands of lanes
hands Python one number per row instead of two timestamps to parse.

SQLite keeps the UTC wall time as text (`bot/store/types.py`), which `julianday` reads; PostgreSQL keeps
`timestamp with time zone`, whose difference is an interval.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement


class seconds_between(FunctionElement[float]):
    """`seconds_between(start, end)`: end − start in seconds, NULL when either is NULL."""

    type = Float()
    name = "seconds_between"
    inherit_cache = True


def _ends(element: seconds_between, compiler: SQLCompiler, **kw: Any) -> tuple[str, str]:
    start, end = list(element.clauses)
    return compiler.process(start, **kw), compiler.process(end, **kw)


@compiles(seconds_between, "sqlite")
def _sqlite(element: seconds_between, compiler: SQLCompiler, **kw: Any) -> str:
    start, end = _ends(element, compiler, **kw)
    return f"((julianday({end}) - julianday({start})) * 86400.0)"


@compiles(seconds_between, "postgresql")
def _postgresql(element: seconds_between, compiler: SQLCompiler, **kw: Any) -> str:
    start, end = _ends(element, compiler, **kw)
    return f"EXTRACT(EPOCH FROM ({end} - {start}))"
