"""Which end-to-end tests run on one database rather than both, and on which (`tests/conftest.py` keeps
the chosen run of each and reports the other as deselected)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping

# End-to-end flows whose tests prove what the bot does, not what a database does under concurrency: each of
# their tests runs on one database, SQLite or PostgreSQL, chosen by its name, so both databases see about
# half of every such module. Whatever two databases do differently under concurrency (a guard, a claim, a
# lease, a restart, two replicas, a race, a migration, the outbox read back, queue order) is in modules not
# listed here, and those run every test on both.
ONE_DATABASE_MODULES = frozenset(
    {
        "test_run_control",
        "test_e2e_status",
        "test_engine_retry",
        "test_e2e_promote",
        "test_engine_bad_results",
        "test_e2e_promotion",
        "test_e2e_promotion_recheck",
        "test_multi_suite_folders",
        "test_e2e_coverage",
        "test_engine_pinning",
        "test_lane_verdicts",
        "test_e2e_compare",
        "test_e2e_named_tasks",
        "test_e2e_spend",
        "test_e2e_accounts",
        "test_e2e_stalls",
        "test_e2e_orphans",
    }
)
DATABASES = ("sqlite", "postgresql")


def chosen_database(module: str, test: str, params: Mapping[str, object]) -> str:
    """The database a test of `ONE_DATABASE_MODULES` runs on: a CRC of its module, name and other
    parameters, so the choice is the same on every machine and every xdist worker (which must agree on
    the collected tests), and a module's tests spread over both databases."""
    others = sorted((key, repr(value)) for key, value in params.items() if key != "db_url")
    return DATABASES[zlib.crc32(f"{module}::{test}{others}".encode()) % len(DATABASES)]
