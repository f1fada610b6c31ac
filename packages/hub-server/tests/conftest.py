"""Fixtures: every test that takes ``server`` runs against two real deployments:

* ``sqlite``   — the embedded default: SQLite file + local artifact directory;
* ``postgres`` — a PostgreSQL server started here (initdb/pg_ctl from Debian's packages, or
  ``PRIME_HUB_TEST_DATABASE_URL``) + S3 through boto3 against moto's standalone server on
  loopback, reached through a TCP proxy that tests can cut to simulate a storage outage.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import boto3
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from prime_hub_testkit import (
    HubServer,
    Postgres,
    StandInIndex,
    TcpProxy,
    make_sdist,
    make_wheel,
    moto_server,
    postgres_server,
    publish,
    stand_in_index,
    start_hub,
)

from prime_hub.settings import Settings

LIMITS = {"max_upload_bytes": 3 * 1024 * 1024, "max_uncompressed_bytes": 12 * 1024 * 1024}


@pytest.fixture(scope="session")
def pg() -> Iterator[Postgres]:
    with postgres_server() as p:
        yield p


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    with moto_server() as url:
        yield url


def _s3_bucket(endpoint: str, bucket: str) -> None:
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    s3.create_bucket(Bucket=bucket)


# Names the test upstream serves: publishing one of them is refused unless an admin allows it.
UPSTREAM_NAMES = ("requests", "served-upstream")


@pytest.fixture(scope="session")
def upstream_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandInIndex]:
    """The pass-through upstream of every test hub: a real PEP 503 index on loopback (so no
    test asks PyPI anything); the names a test publishes are not on it unless it adds them."""
    with stand_in_index(tmp_path_factory.mktemp("upstream-index"), UPSTREAM_NAMES) as index:
        yield index


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def server(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    upstream_index: StandInIndex,
) -> Iterator[HubServer]:
    data_dir = tmp_path_factory.mktemp(f"hub-{request.param}")
    env = {"PRIME_HUB_DATA_DIR": str(data_dir), "PRIME_HUB_UPSTREAM_INDEX_URL": upstream_index.url}
    env.update({f"PRIME_HUB_{k.upper()}": str(v) for k, v in LIMITS.items()})
    proxy = None
    if request.param == "postgres":
        pg: Postgres = request.getfixturevalue("pg")
        endpoint: str = request.getfixturevalue("s3_endpoint")
        _s3_bucket(endpoint, "prime-hub-test")
        proxy = TcpProxy(int(endpoint.rsplit(":", 1)[1]))
        env.update(
            PRIME_HUB_DATABASE_URL=pg.new_database("prime_hub_test"),
            PRIME_HUB_STORAGE="s3",
            PRIME_HUB_S3_BUCKET="prime-hub-test",
            PRIME_HUB_S3_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}",
            PRIME_HUB_S3_ACCESS_KEY_ID="testing",
            PRIME_HUB_S3_SECRET_ACCESS_KEY="testing",
        )
    settings = Settings(**{k[len("PRIME_HUB_") :].lower(): v for k, v in env.items()})
    hub = start_hub(request.param, settings, env)
    hub.s3_proxy = proxy
    yield hub
    hub.stop()
    if proxy is not None:
        proxy.cut()


@pytest.fixture
def user(server: HubServer) -> tuple[str, str]:
    """A fresh user and a publish token for them."""
    return server.new_user()


@pytest.fixture
def uid(request: pytest.FixtureRequest) -> str:
    """A short name unique to this test, for environment names."""
    import hashlib

    return "e" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]


@pytest.fixture
def env(server: HubServer, user: tuple[str, str], uid: str) -> tuple[str, str, str]:
    """`(owner, token, name)` of a fresh environment published at 1.0.0 (a wheel and an sdist)
    by `user`; a module that needs other versions defines its own."""
    owner, token = user
    r = publish(server, token, owner, uid, [make_wheel(uid, "1.0.0"), make_sdist(uid, "1.0.0")])
    assert r.status_code == 201, r.text
    return owner, token, uid


@pytest.fixture
def database_url(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str, str], str]:
    """`database_url(backend, name)`: the URL of an empty database, a SQLite file or a new
    PostgreSQL database called `name`, for tests that run migrations themselves."""

    def empty(backend: str, name: str) -> str:
        if backend == "sqlite":
            return f"sqlite:///{tmp_path / name}.db"
        pg: Postgres = request.getfixturevalue("pg")
        return pg.new_database(name)

    return empty


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("PRIME_HUB_TESTING", "1")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    """A failed browser test reports where the browser was and what the page said: a flaky
    failure in CI is otherwise a bare assertion with nothing to go on."""
    outcome = yield
    report = outcome.get_result()
    drv = getattr(item, "funcargs", {}).get("browser")
    if report.when != "call" or not report.failed or drv is None:
        return
    try:
        url = drv.current_url
        text = drv.find_element("tag name", "body").text
    except Exception as e:  # the browser itself may be what broke
        report.sections.append(("browser", f"(page not readable: {e!r})"))
        return
    report.sections.append(("browser", f"url: {url}\n{text[:3000]}"))
