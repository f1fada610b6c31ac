"""Evaluation results attached to versions: validation, permissions, listing, deletion."""

from __future__ import annotations

import pytest
from prime_hub_testkit import make_sdist, make_wheel, publish


def _summary(**over):
    body = {
        "model": "m-7b",
        "sampling_args": {"temperature": 0.7},
        "env_args": {"source": "sample"},
        "num_examples": 10,
        "rollouts_per_example": 4,
        "reward_mean": 0.625,
        "reward_std": 0.2,
        "pass_at_k": {"1": 0.625, "4": 0.9},
        "metrics": {"correct": 0.625, "format": 1.0},
        "num_rollouts": 40,
        "num_errors": 1,
        "run_id": "r-1",
        "verifiers_version": "0.5.0",
        "duration_s": 12.5,
    }
    body.update(over)
    return body


@pytest.fixture
def env(server, user, uid):
    owner, token = user
    for v in ("1.0.0", "1.1.0"):
        r = publish(server, token, owner, uid, [make_wheel(uid, v), make_sdist(uid, v)])
        assert r.status_code == 201, r.text
    return owner, token, uid


def test_push_then_read_back_by_version_and_model(server, env):
    owner, token, name = env
    base = f"/api/v1/environments/{owner}/{name}"
    with server.client(token) as c:
        first = c.post(f"{base}/versions/1.0.0/evals", json=_summary())
        assert first.status_code == 201, first.text
        rec = first.json()
        assert rec["version"] == "1.0.0" and rec["submitted_by"] == owner
        assert rec["pass_at_k"] == {"1": 0.625, "4": 0.9}
        assert rec["sampling_args"] == {"temperature": 0.7}
        second = c.post(
            f"{base}/versions/latest/evals", json=_summary(model="m-70b", reward_mean=0.9)
        )
        assert second.status_code == 201 and second.json()["version"] == "1.1.0"

    with server.client() as anon:  # public environment: anyone reads results
        all_evals = anon.get(f"{base}/evals").json()["evals"]
        assert [e["model"] for e in all_evals] == ["m-70b", "m-7b"]  # newest first
        v1 = anon.get(f"{base}/versions/1.0.0/evals").json()["evals"]
        assert [e["id"] for e in v1] == [rec["id"]]
        assert (
            anon.get(f"{base}/evals", params={"model": "m-7b"}).json()["evals"][0]["id"]
            == rec["id"]
        )
        assert (
            anon.get(f"{base}/evals", params={"version": "1.1.0"}).json()["evals"][0]["model"]
            == "m-70b"
        )


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"model": ""}, "model"),
        ({"num_rollouts": -1}, "num_rollouts"),
        ({"pass_at_k": {"zero": 0.5}}, "positive integers"),
        ({"pass_at_k": {"1": 1.5}}, "within"),
        ({"reward_std": -0.1}, "reward_std"),
        ({"num_errors": 99}, "cannot exceed"),
        ({"env_args": {"blob": "x" * 70_000}}, "exceed"),
    ],
)
def test_malformed_summaries_are_rejected_clearly(server, env, change, fragment):
    owner, token, name = env
    with server.client(token) as c:
        r = c.post(
            f"/api/v1/environments/{owner}/{name}/versions/1.0.0/evals", json=_summary(**change)
        )
        assert r.status_code in (400, 422), r.text
        assert fragment in r.text
        assert c.get(f"/api/v1/environments/{owner}/{name}/evals").json()["evals"] == []


def test_non_finite_reward_is_rejected(server, env):
    owner, token, name = env
    with server.client(token) as c:
        r = c.post(
            f"/api/v1/environments/{owner}/{name}/versions/1.0.0/evals",
            content=b'{"model": "m", "num_examples": 1, "num_rollouts": 1, "reward_mean": NaN}',
            headers={"Content-Type": "application/json"},
        )
        assert r.status_code in (400, 422), r.text


def test_unknown_version_and_missing_token(server, env):
    owner, token, name = env
    base = f"/api/v1/environments/{owner}/{name}"
    with server.client(token) as c:
        r = c.post(f"{base}/versions/9.9.9/evals", json=_summary())
        assert r.status_code == 404 and "9.9.9" in r.json()["detail"]
    with server.client() as anon:
        assert anon.post(f"{base}/versions/1.0.0/evals", json=_summary()).status_code == 401


def test_who_may_push_and_delete(server, env):
    owner, token, name = env
    base = f"/api/v1/environments/{owner}/{name}"
    _, reader = server.new_user("reader", scope="read")
    other, other_tok = server.new_user("evaluator")
    with server.client(reader) as c:  # read-scoped tokens do not write
        assert c.post(f"{base}/versions/1.0.0/evals", json=_summary()).status_code == 403
    with server.client(other_tok) as c:  # anyone with publish scope may evaluate a public env
        r = c.post(f"{base}/versions/1.0.0/evals", json=_summary())
        assert r.status_code == 201 and r.json()["submitted_by"] == other
        theirs = r.json()["id"]
    with server.client(token) as c:
        mine = c.post(f"{base}/versions/1.0.0/evals", json=_summary()).json()["id"]
    with server.client(other_tok) as c:  # not the submitter, not an owner
        assert c.delete(f"{base}/evals/{mine}").status_code == 403
        assert c.delete(f"{base}/evals/{theirs}").status_code == 200
    with server.client(token) as c:  # the owner may remove anyone's result from their env
        assert c.delete(f"{base}/evals/{mine}").status_code == 200
        assert c.delete(f"{base}/evals/{mine}").status_code == 404
        assert c.get(f"{base}/evals").json()["evals"] == []


def test_results_go_with_a_deleted_version(server, env):
    owner, token, name = env
    base = f"/api/v1/environments/{owner}/{name}"
    with server.client(token) as c:
        assert c.post(f"{base}/versions/1.0.0/evals", json=_summary()).status_code == 201
        assert c.post(f"{base}/versions/1.1.0/evals", json=_summary()).status_code == 201
        assert c.delete(f"{base}/versions/1.0.0").status_code == 200
        remaining = c.get(f"{base}/evals").json()["evals"]
        assert [e["version"] for e in remaining] == ["1.1.0"]


# ------------------------------------------------------------------ forged and stored fields
# Issue 26, "Eval pushes are not validated": extra fields were spread over the stored view, so
# a publisher could forge `id` and `version`, and a `version` that is not PEP 440 made the
# environment's page answer 500 for every visitor until the result was deleted.


FORGED = [
    {"id": 1},
    {"version": "not a version"},
    {"version": "1.1.0"},  # another, existing version: still only the URL's counts
    {"submitted_by": "admin"},
    {"created_at": "1999-01-01T00:00:00"},
    {"anything_else": 1},
]


def test_fields_outside_the_schema_are_refused(server, env):
    """Decided: refused (422, naming the field), never stored nor silently dropped."""
    owner, token, name = env
    base = f"/api/v1/environments/{owner}/{name}"
    with server.client(token) as c:
        for forged in FORGED:
            r = c.post(f"{base}/versions/1.0.0/evals", json=_summary(**forged))
            assert r.status_code == 422, (forged, r.text)
            assert next(iter(forged)) in r.json()["detail"]
        assert c.get(f"{base}/evals").json()["evals"] == []
    with server.client() as anon:
        assert anon.get(f"/{owner}/{name}").status_code == 200


def _store_raw(server, owner: str, name: str, details: dict) -> int:
    """A row as the hub stored pushes before they were validated (the report's rows)."""
    from prime_hub.db.models import EvalResult, Version

    env = server.hub.queries.get_environment(server.hub.accounts.authenticate(None), owner, name)
    with server.hub.db.writer.begin() as s:
        ver = s.query(Version).filter_by(environment_id=env.id, version="1.0.0").one()
        row = EvalResult(
            environment_id=env.id,
            version_id=ver.id,
            model="m-old",
            reward_mean=0.5,
            num_examples=1,
            rollouts_per_example=1,
            num_rollouts=1,
            num_errors=0,
            details=details,
        )
        s.add(row)
        s.flush()
        return row.id


def test_rows_stored_before_validation_cannot_break_or_forge_the_views(server, env):
    owner, _token, name = env
    row_id = _store_raw(
        server,
        owner,
        name,
        {
            "id": 999_999,
            "version": "not a version",
            "submitted_by": "admin",
            "pass_at_k": {"one": "x"},
            "metrics": {"correct": "high"},
            "sampling_args": {"temperature": 0.5},
        },
    )
    with server.client() as anon:
        page = anon.get(f"/{owner}/{name}")
        assert page.status_code == 200, page.text[:300]
        assert "not a version" not in page.text and "m-old" in page.text
        (rec,) = anon.get(f"/api/v1/environments/{owner}/{name}/evals").json()["evals"]
    assert rec["id"] == row_id and rec["version"] == "1.0.0"
    assert rec["submitted_by"] is None  # the row has no submitter; the forged name is gone
    assert "pass_at_k" not in rec and "metrics" not in rec  # invalid: left out
    assert rec["sampling_args"] == {"temperature": 0.5}  # valid details still shown
