from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Test helper modules (harness, csb_tree) live beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ray_cluster
import xdist_groups
from docker_standin import serve_docker_standin
from one_database import ONE_DATABASE_MODULES, chosen_database
from postgres_cluster import Cluster, required, server_bin
from ray_cluster import RayHead
from sqlite_template import migrated_sqlite

pytest_plugins = ("pytester",)  # test_xdist_groups collects a small test file of its own

RAY_GROUP = "ray-head"

_ray_heads: list[RayHead] = []  # the session's head, once started (for the teardown hook)


@pytest.fixture(scope="session", autouse=True)
def docker_daemon() -> Iterator[str]:
    """Every bot in the tests runs the example bench with Harbor's default environment, local Docker, so
    its approval card asks the Docker daemon: a stand-in answers (a test wanting another sets its own)."""
    host = serve_docker_standin()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DOCKER_HOST", host)
        yield host
    shutil.rmtree(Path(host.removeprefix("unix://")).parent, ignore_errors=True)  # its socket's own folder


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """`make test` spreads the tests over worker processes (pytest-xdist, `--dist loadgroup`), the slow
    ones first (`xdist_groups.slow_first`). Session fixtures are per worker: each worker that needs
    PostgreSQL starts its own small cluster, but a Ray
    head is heavy (a dozen processes, and CPU for as long as it runs), so every test that uses it is
    sent to the same worker, one after another (where the first of them was collected), and one head
    serves them all."""
    _one_database_each(config, items)
    items[:] = xdist_groups.slow_first(items)
    grouped = [item for item in items if "ray_session" in getattr(item, "fixturenames", ())]
    for item in grouped:
        item.add_marker(pytest.mark.xdist_group(RAY_GROUP))
    if grouped:
        at = items.index(grouped[0])
        others = [item for item in items if item not in grouped]
        items[:] = [*others[:at], *grouped, *others[at:]]
    yield
    if config.getoption("loadgroup", default=False):
        for item in grouped:
            xdist_groups.join(item, RAY_GROUP)


def _one_database_each(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keeps, of a test of `ONE_DATABASE_MODULES` run on both databases, the run on the database its name
    chooses (a CRC of the name without the database, so the choice is the same on every machine and
    every worker), and reports the other as deselected."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        module = getattr(item, "module", None)
        if "db_url" not in params or module is None or module.__name__ not in ONE_DATABASE_MODULES:
            kept.append(item)
            continue
        chosen = chosen_database(module.__name__, getattr(item, "originalname", item.name), params)
        (kept if params["db_url"] == chosen else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The Ray tests run one after another on one worker: after the last of them the head is
    stopped, instead of idling (and using CPU) until the session ends. A later test that needs it
    starts it again (the `ray_head` fixture)."""
    yield
    uses = "ray_session" in getattr(item, "fixturenames", ())
    next_uses = nextitem is not None and "ray_session" in getattr(nextitem, "fixturenames", ())
    if uses and not next_uses and _ray_heads:
        for head in _ray_heads:
            head.kill()


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
    """The database a store, engine or end-to-end test runs on: each such test runs on both, but for the
    modules of `ONE_DATABASE_MODULES`, whose tests run on one each. Either is at the schema's head, a
    copy of a migrated template (`sqlite_template.py`, `postgres_cluster.py`)."""
    if request.param == "sqlite":
        return migrated_sqlite(tmp_path / "bot.db")
    cluster: Cluster | None = request.getfixturevalue("postgres")
    if cluster is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    return cluster.new_database()


@pytest.fixture
def empty_db_url(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> str:
    """A database of `db_url`'s kind with no schema yet, for the tests of the migrations themselves."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'empty.db'}"
    cluster: Cluster = request.getfixturevalue("postgres")
    return cluster.new_database(migrated=False)


@pytest.fixture(scope="session")
def ray_session() -> Iterator[RayHead | None]:
    """The session's Ray head, started by the first test that asks for it; None without the test venv
    (CSB_TEST_RAY, set by `make test`), which is an error under CI."""
    bin_dir = ray_cluster.ray_bin()
    if bin_dir is None:
        if ray_cluster.required():
            pytest.fail("CI runs the Ray tests, and CSB_TEST_RAY names no venv with ray (run make test)")
        yield None
        return
    head = RayHead(bin_dir)
    _ray_heads.append(head)
    try:
        head.start()
    except Exception as exc:
        head.stop()
        if ray_cluster.required():
            pytest.fail(f"CI runs the Ray tests, and the Ray head did not start: {exc}")
        raise
    try:
        yield head
    finally:
        head.stop()


@pytest.fixture
def ray_head(ray_session: RayHead | None) -> RayHead:
    """The running Ray head (`ray_head.dashboard_url`, `ray_head.restart()`); the test is skipped
    when the Ray test venv is missing. A test that killed the head leaves it restarted for the next."""
    if ray_session is None:
        pytest.skip(
            "Ray tests need CSB_TEST_RAY (the bin folder of a venv with ray[default]; make test sets it)"
        )
    if not ray_session.running:
        ray_session.start()
    return ray_session
