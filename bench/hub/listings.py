"""Listing latency against the listing's own SQL, at 1,000 environments x 100 versions.

For each backend (SQLite file; PostgreSQL started by the hub's test kit), this populates one
owner with ``--envs`` environments of ``--versions`` versions each (a wheel row per version,
every tenth version a pre-release, the newest version of every seventh environment yanked,
two tags per environment), written at migration 0005 so that upgrading to head also times
0006's backfill. Then it serves the database with ``prime-hub serve`` (a subprocess, one
worker) and times each listing over one keep-alive HTTP/1.1 connection (a raw-socket client,
`loadgen.KeepAliveClient`):

* cold: the first request after a change (`Changer`: another connection changes one listed
  environment and bumps the change counter, untimed), alternating with the baseline, the
  listing's own SQL: the statements a cold request sends (captured in-process through the
  same app), replayed on a raw driver connection with every row fetched, each after its own
  change; ``cold`` is requested right after an untimed ``GET /health`` (the server awake, as
  a hub at work is), ``cold_idle`` with the server idle since the change (an idle VM's CPU
  takes 0.5-1 ms to wake, whatever the request);
* warm: the same request repeated with nothing changed;
* the server's floor: ``GET /health`` (no SQL, a tiny body, through the whole framework).

``--requests`` timed rounds each; medians and minima are both kept: on a shared machine the
minimum is the figure least moved by other jobs.

    uv run --no-sync python bench/hub/listings.py [--backends sqlite,postgres] [--envs 1000] [--versions 100]

Results go to ``bench/hub/listings.json`` (``--quick``: 50 x 20, not kept). ``--before TREE``
also serves the same population (at 0005) with an older tree's hub, for its HTTP times:

    git archive <commit> packages/hub-server/src | tar -x -C /tmp/hub-before
    uv run --no-sync python bench/hub/listings.py --before /tmp/hub-before
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "packages/hub-server/tests"))  # the test kit starts PostgreSQL

from loadgen import KeepAliveClient  # noqa: E402
from run import free_port, wait_http  # noqa: E402

OWNER = "bench"
LISTINGS = {  # name: (path, query)
    "JSON API, 200 per page": ("/api/v1/environments", {"limit": "200"}),
    "CLI listing, 200 per page": ("/api/v1/environmentshub/", {"limit": "200"}),
    "home page /": ("/", {}),
    "owner page /bench": (f"/{OWNER}", {}),
}


TOPICS = ("math", "code", "science", "logic", "research")  # each environment: "bench" + one


def version_strings(n: int) -> list[str]:
    return [f"0.{k}.0rc1" if k % 10 == 9 else f"0.{k}.0" for k in range(n)]


def populate(url: str, envs: int, versions: int, head: bool = True) -> dict[str, float]:
    """Write the population at 0005, then upgrade to head (0006 backfills the pointers);
    ``head=False`` leaves it at 0005, for a tree from before 0006."""
    from sqlalchemy import create_engine, insert

    from prime_hub.db.migrate import upgrade
    from prime_hub.db.models import Account, Environment, File, Tag, Version, utcnow

    engine = create_engine(url)
    upgrade(engine, "0005")
    t = time.perf_counter()
    now = utcnow()
    strings = version_strings(versions)
    with engine.begin() as conn:
        conn.execute(insert(Account.__table__).values(id=1, slug=OWNER, kind="user"))
        conn.execute(
            insert(Environment.__table__),
            [
                dict(
                    id=e,
                    owner_id=1,
                    name=f"env-{e:04d}",
                    normalized_name=f"env-{e:04d}",
                    description=f"benchmark environment {e}",
                    created_at=now,
                    updated_at=now,
                )
                for e in range(1, envs + 1)
            ],
        )
        vrows, frows = [], []
        for e in range(1, envs + 1):
            for k, v in enumerate(strings):
                vid = (e - 1) * versions + k + 1
                vrows.append(
                    dict(
                        id=vid,
                        environment_id=e,
                        version=v,
                        canonical_version=v,
                        summary="s",
                        dependencies=["numpy>=1"],
                        yanked=e % 7 == 0 and k == versions - 1,
                        yanked_reason="",
                        created_at=now,
                    )
                )
                fn = f"env_{e:04d}-{v}-py3-none-any.whl"
                frows.append(
                    dict(
                        version_id=vid,
                        environment_id=e,
                        filename=fn,
                        kind="wheel",
                        sha256=f"{vid:064x}",
                        size=1000,
                        storage_key=f"blobs/{vid:064x}/{fn}",
                        core_metadata=b"Metadata-Version: 2.1\n" * 20,
                        metadata_sha256=f"{vid:064x}",
                        downloads=0,
                        uploaded_at=now,
                    )
                )
        conn.execute(insert(Version.__table__), vrows)
        conn.execute(
            insert(Tag.__table__),
            [
                dict(environment_id=e, tag=t)
                for e in range(1, envs + 1)
                for t in ("bench", TOPICS[e % len(TOPICS)])
            ],
        )
        conn.execute(insert(File.__table__), frows)
    populated = time.perf_counter() - t
    t = time.perf_counter()
    if head:
        upgrade(engine)
    backfill = time.perf_counter() - t
    engine.dispose()
    return {"populate_s": round(populated, 2), "upgrade_0006_s": round(backfill, 3)}


def capture_statements(settings, path: str, params: dict[str, str]) -> list[tuple[str, object]]:
    """The SQL statements one anonymous request for ``path`` sends (in-process, same app)."""
    from prime_hub_testkit import driver_statements
    from sqlalchemy import event
    from starlette.testclient import TestClient

    from prime_hub.app import build_hub, create_asgi

    hub = build_hub(settings, migrate=False)
    seen: list[tuple[str, object]] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        seen.append((statement, parameters))

    engines = {id(e): e for e in (hub.db.read_engine, hub.db.write_engine)}
    with TestClient(create_asgi(settings, hub)) as client, Changer(hub.db.url) as change:
        client.get(path, params=params)  # first-use imports
        client.get(path, params=params)  # the route has marked its path a listing
        change()  # the captured request is a cold one: the first after a change
        for e in engines.values():
            event.listen(e, "before_cursor_execute", record)
        # listings run compiled statements on a driver cursor, out of the engines' sight
        with driver_statements(hub, lambda sql, params: seen.append((sql, params))):
            r = client.get(path, params=params)
        for e in engines.values():
            event.remove(e, "before_cursor_execute", record)
    assert r.status_code == 200, r.text
    # the listing cache reads the change counter on a raw connection of its own
    # (`prime_hub.db.counter`), which the engine's events do not see
    if not any("hub_state" in sql for sql, _ in seen):
        seen.insert(0, (hub.db.counter.statement, ()))
    hub.db.dispose()
    return seen


class Changer:
    """What another process's change does to this server's listings, outside the timing: on
    its own connection, one environment that every listing's first page shows changes (its
    download count; environments 1-20 in turn: the pages are ordered by name, creation or
    update time, all equal to the id order here) and the database's change counter
    (`HubState.generation`) is bumped, in one transaction. The next request rebuilds the
    listing with that one entry changed."""

    def __init__(self, url: str) -> None:
        from prime_hub.db.engine import open_database

        # the hub's own write engine, as another worker's: on SQLite its commits do not wait
        # for an fsync (synchronous=NORMAL in WAL mode), so the server is not left idle for
        # longer than such a change takes (an idle vCPU wakes slowly: up to ~1 ms here)
        self.db = open_database(url)
        self.engine = self.db.write_engine
        self.calls = 0

    def __enter__(self) -> Changer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.dispose()

    def __call__(self) -> None:
        from sqlalchemy import text

        self.calls += 1
        with self.engine.begin() as conn:
            conn.execute(
                text("UPDATE environments SET downloads = downloads + 1 WHERE id = :id"),
                {"id": self.calls % 20 + 1},
            )
            conn.execute(text("UPDATE hub_state SET generation = generation + 1 WHERE id = 1"))


def cold_rounds(
    url: str,
    statements: list[tuple[str, object]],
    base: str,
    path: str,
    params: dict[str, str],
    rounds: int,
    change: Callable[[], None],
) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float], bytes]:
    """The cold figures: the listing's SQL replayed on a raw driver connection and the
    listing requested over HTTP, alternately, each right after its own change (untimed), so
    that all see the same machine noise and the same database (SQLite's write-ahead log
    grows with every change). The listing is requested twice a round, each time after its
    own change: once with the server idle since the change (what a quiet hub's first
    request after a change meets), once right after an untimed ``GET /health`` on the same
    connection (a hub at work: its CPU is not waking from idle; on this VM a request to an
    idle server costs 0.5-1 ms more, whatever it asks). Returns (SQL, HTTP from idle, HTTP
    awake), each (median, minimum), and the last body; checks as in `http_s`."""
    target = f"{path}?{urlencode(params)}" if params else path
    sql_times, idle_times, awake_times = [], [], []
    with KeepAliveClient(base) as c, ReplayWorker(url, statements) as replay:
        for i in range(rounds + 2):
            change()
            sql_times.append(replay())
            change()
            seconds, body = _timed_get(c, target, parse=i in (0, rounds + 1))
            idle_times.append(seconds)
            change()
            _timed_get(c, "/health", parse=False)
            seconds, body = _timed_get(c, target, parse=i in (0, rounds + 1))
            awake_times.append(seconds)
    return (
        _summary(sql_times[2:]),
        _summary(idle_times[2:]),
        _summary(awake_times[2:]),
        body,
    )


# The baseline's process: it runs the listing's statements on a raw driver connection, every
# row fetched, when told to (a line on stdin), and answers the seconds they took.
_REPLAY = r"""
import json, sys, time
from sqlalchemy import create_engine
raw = create_engine(sys.argv[1]).raw_connection()
statements = [(sql, tuple(p) if isinstance(p, list) else p) for sql, p in json.loads(input())]
for _ in sys.stdin:
    t = time.perf_counter()
    cur = raw.cursor()
    for sql, params in statements:
        cur.execute(sql, params)
        if cur.description is not None:
            cur.fetchall()
    cur.close()
    raw.rollback()
    print(time.perf_counter() - t, flush=True)
"""


class ReplayWorker:
    """The listing's SQL, replayed in a process of its own on the server's core: like the
    server, it reads what another core just wrote and wakes from a read on a pipe, as the
    server wakes from one on its socket (replayed in the client's process instead, the SQL
    ran on the core that had just written the change, with the changed pages in its cache:
    measured here, the server's own execution of the same statements was ~40 % faster on
    the writer's core than on the other)."""

    def __init__(self, url: str, statements: list[tuple[str, object]]) -> None:
        kept = [
            (sql, params)
            for sql, params in statements
            if not sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK"))
        ]  # the raw connection has its own transaction
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _REPLAY, url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=_pinned(SERVER_CORES),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(kept) + "\n")

    def __call__(self) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def __enter__(self) -> ReplayWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


# Item 4 of issue 30: the server and the load generator on separate cores where the machine
# has them: the server (and the SQL baseline's process) on the last core, the client on the
# others.
_CORES = sorted(os.sched_getaffinity(0))
SERVER_CORES = set(_CORES[-1:]) if len(_CORES) > 1 else set(_CORES)
CLIENT_CORES = set(_CORES[:-1]) if len(_CORES) > 1 else set(_CORES)


def _pinned(cores: set[int]) -> Callable[[], None]:
    return lambda: os.sched_setaffinity(0, cores)


def _summary(times: list[float]) -> tuple[float, float]:
    """(median, minimum): the minimum is the figure least moved by other jobs' load."""
    return statistics.median(times), min(times)


def http_s(base: str, path: str, params: dict[str, str], rounds: int) -> tuple[float, float, bytes]:
    """Sequential requests on one keep-alive connection (`loadgen.KeepAliveClient`: a raw
    socket, so the client's own Python is not charged to the server). Every response must
    be a 200 with its whole body (Content-Length or chunked framing, checked by the
    client); JSON bodies are parsed on the first and the last. Returns (median, minimum,
    the last body)."""
    target = f"{path}?{urlencode(params)}" if params else path
    times = []
    with KeepAliveClient(base) as c:
        for i in range(rounds + 2):
            seconds, body = _timed_get(c, target, parse=i in (0, rounds + 1))
            times.append(seconds)
    return (*_summary(times[2:]), body)


def _timed_get(c: KeepAliveClient, target: str, parse: bool) -> tuple[float, bytes]:
    """One timed GET that must answer 200; with ``parse``, a JSON body must parse."""
    t = time.perf_counter()
    status, headers, body = c.get(target)
    seconds = time.perf_counter() - t
    assert status == 200, (target, status, body[:300])
    if parse and headers.get("content-type", "").startswith("application/json"):
        json.loads(body)
    return seconds, body


@contextlib.contextmanager
def serving(env: dict[str, str], tree: str | None = None):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prime_hub.cli", "serve", "--port", str(port)],
        env={
            **os.environ,
            **env,
            **({"PYTHONPATH": f"{tree}/packages/hub-server/src"} if tree else {}),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_pinned(SERVER_CORES),
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", timeout=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_backend(backend: str, a: argparse.Namespace, tmp: Path, pg) -> dict:  # type: ignore[no-untyped-def]
    from prime_hub.settings import Settings

    data = tmp / backend
    env = {
        "PRIME_HUB_DATA_DIR": str(data),
        "PRIME_HUB_UPSTREAM_INDEX_URL": "",
        "PRIME_HUB_TESTING": "1",
    }
    if backend == "postgres":
        env["PRIME_HUB_DATABASE_URL"] = pg.new_database("prime_hub_bench_listings")
    settings = Settings(
        **{k[len("PRIME_HUB_") :].lower(): v for k, v in env.items() if k != "PRIME_HUB_TESTING"}
    )
    data.mkdir(parents=True, exist_ok=True)
    url = settings.resolved_database_url
    out: dict = {"backend": backend, **populate(url, a.envs, a.versions)}
    print(
        f"{backend}: populated {a.envs} x {a.versions} in {out['populate_s']} s; "
        f"0006 backfill {out['upgrade_0006_s']} s",
        flush=True,
    )
    with serving(env) as base:
        # the server's floor: a request that does nothing (no SQL, a tiny JSON body)
        floor = http_s(base, "/health", {}, a.requests)[:2]
        out["floor_ms"] = round(floor[0] * 1000, 2)
        out["floor_min_ms"] = round(floor[1] * 1000, 2)
        print(
            f"  GET /health (the floor): median {floor[0] * 1000:.2f} ms, minimum "
            f"{floor[1] * 1000:.2f} ms",
            flush=True,
        )
        for name, (path, params) in LISTINGS.items():
            # the baseline: the SQL a cold request (the first after a change) sends
            statements = capture_statements(settings, path, params)
            with Changer(url) as change:
                sql, cold_idle, cold, cold_body = cold_rounds(
                    url, statements, base, path, params, a.requests, change
                )
            *warm, warm_body = http_s(base, path, params, a.requests)
            assert cold_body == warm_body, f"{name}: the cached response differs from the built one"
            out[name] = {
                "statements": len(statements),
                "bytes": len(cold_body),
                # to compare the responses of two trees over the same population
                "body_sha256": hashlib.sha256(cold_body).hexdigest(),
            }
            for label, http in (("cold", cold), ("cold_idle", cold_idle), ("warm", warm)):
                out[name][label] = {
                    "sql_ms": round(sql[0] * 1000, 2),
                    "http_ms": round(http[0] * 1000, 2),
                    "ratio": round(http[0] / sql[0], 2),
                    "sql_min_ms": round(sql[1] * 1000, 2),
                    "http_min_ms": round(http[1] * 1000, 2),
                    "ratio_of_minima": round(http[1] / sql[1], 2),
                    # what the listing costs the server beyond an empty request, against its SQL
                    "net_ratio_of_minima": round((http[1] - floor[1]) / sql[1], 2),
                }
                print(
                    f"  {name:<26} {label:<9} {len(statements)} statements  median: SQL "
                    f"{sql[0] * 1000:6.2f} ms, HTTP {http[0] * 1000:6.2f} ms, "
                    f"x{http[0] / sql[0]:.2f}  minimum: SQL {sql[1] * 1000:6.2f} ms, HTTP "
                    f"{http[1] * 1000:6.2f} ms, x{http[1] / sql[1]:.2f}, beyond the floor "
                    f"x{(http[1] - floor[1]) / sql[1]:.2f}",
                    flush=True,
                )
    if a.before:
        out["before"] = run_before(backend, a, tmp, pg)
    return out


def run_before(backend: str, a: argparse.Namespace, tmp: Path, pg) -> dict:  # type: ignore[no-untyped-def]
    """The same population served by an older tree (``--before``): its HTTP times only."""
    data = tmp / f"{backend}-before"
    data.mkdir(parents=True, exist_ok=True)
    env = {"PRIME_HUB_DATA_DIR": str(data), "PRIME_HUB_UPSTREAM_INDEX_URL": ""}
    if backend == "postgres":
        env["PRIME_HUB_DATABASE_URL"] = pg.new_database("prime_hub_bench_listings_before")
        url = env["PRIME_HUB_DATABASE_URL"]
    else:
        url = f"sqlite:///{data / 'hub.db'}"
    populate(url, a.envs, a.versions, head=False)
    out = {}
    with serving(env, a.before) as base:
        for name, (path, params) in LISTINGS.items():
            *http, body = http_s(base, path, params, a.requests)
            out[name] = {
                "body_sha256": hashlib.sha256(body).hexdigest(),
                "http_ms": round(http[0] * 1000, 2),
                "http_min_ms": round(http[1] * 1000, 2),
            }
            print(
                f"  before: {name:<26} HTTP median {http[0] * 1000:7.2f} ms, minimum "
                f"{http[1] * 1000:7.2f} ms",
                flush=True,
            )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="sqlite,postgres")
    p.add_argument("--envs", type=int, default=1000)
    p.add_argument("--versions", type=int, default=100)
    p.add_argument("--requests", type=int, default=30, help="timed requests per listing")
    p.add_argument("--quick", action="store_true", help="50 x 20, 5 requests; not kept")
    p.add_argument("--out", type=Path, default=HERE / "listings.json")
    p.add_argument(
        "--before",
        help="an export of an older tree (packages/hub-server/src) to serve the same population "
        "with, at migration 0005",
    )
    a = p.parse_args()
    os.sched_setaffinity(0, CLIENT_CORES)
    if a.quick:
        a.envs, a.versions, a.requests = 50, 20, 5
    backends = a.backends.split(",")
    results = {
        "load_before": os.getloadavg()[0],
        "server_cores": sorted(SERVER_CORES),
        "client_cores": sorted(CLIENT_CORES),
        "envs": a.envs,
        "versions": a.versions,
        "runs": [],
    }
    with (
        tempfile.TemporaryDirectory(prefix="bench-listings-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        pg = None
        if "postgres" in backends:
            from prime_hub_testkit import postgres_server

            pg = stack.enter_context(postgres_server())
        for backend in backends:
            results["runs"].append(run_backend(backend, a, Path(tmp), pg))
    results["load_after"] = os.getloadavg()[0]
    if not a.quick:
        a.out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
