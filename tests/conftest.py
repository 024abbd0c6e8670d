from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Test helper modules (harness, csb_tree) live beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from postgres_cluster import Cluster, required, server_bin


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster | None]:
    """The session's PostgreSQL cluster, or None when PostgreSQL is not installed (an error under CI)."""
    bin_dir = server_bin()
    if bin_dir is None:
        if required():
            pytest.fail("CI runs the PostgreSQL tests, and no initdb was found")
        yield None
        return
    cluster = Cluster(bin_dir)
    try:
        cluster.start()
    except Exception as exc:
        cluster.stop()
        if required():
            pytest.fail(f"CI runs the PostgreSQL tests, and PostgreSQL did not start: {exc}")
        raise
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The database a store, engine or end-to-end test runs on: each such test runs on both."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bot.db'}"
    cluster: Cluster | None = request.getfixturevalue("postgres")
    if cluster is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    return cluster.new_database()
