"""Rollouts go with an eval (issue 28 item 1): `PUT .../evals/{id}/rollouts` streams a run's
results.jsonl to the hub, size-capped, each line a JSON object, gzip-compressed at rest; the
JSON API and the viewer read it back through its index; private environments' rollouts are
seen by members only; a publish-scoped token of the submitter pushes. Run on SQLite + folder
and PostgreSQL + S3 (the ``server`` fixture)."""

from __future__ import annotations

import gzip
import zlib

import orjson
import pytest
from prime_hub_testkit import make_wheel, publish

from prime_hub.db.models import EvalResult


def _records(n: int = 6) -> list[dict]:
    """vf-eval-like records: odd rollouts fail (reward 0), the third has an error."""
    out = []
    for i in range(n):
        out.append(
            {
                "example_id": i // 2,
                "rollout_index": i % 2,
                "prompt": [{"role": "user", "content": f"What is {i} + 1?"}],
                "completion": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"c{i}",
                                "type": "function",
                                "function": {"name": "add", "arguments": f'{{"a": {i}}}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": f"c{i}", "content": str(i + 1)},
                    {"role": "assistant", "content": f"\\boxed{{{i + 1}}}"},
                ],
                "answer": str(i + 1),
                "parsed_answer": str(i + 1) if i % 2 == 0 else None,
                "reward": 1.0 if i % 2 == 0 else 0.0,
                "metrics": {"correct": 1.0 if i % 2 == 0 else 0.0},
                "error": {"error": "ToolError", "message": "boom"} if i == 3 else None,
                "stop_condition": "single_turn_completed",
                "token_usage": {"input_tokens": 10, "output_tokens": 5},
            }
        )
    return out


def _jsonl(records: list[dict]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


SUMMARY = {"model": "m-7b", "num_examples": 3, "rollouts_per_example": 2, "num_rollouts": 6}


def _eval(server, token, owner, name) -> int:
    with server.client(token) as c:
        r = c.post(f"/api/v1/environments/{owner}/{name}/versions/1.0.0/evals", json=SUMMARY)
        assert r.status_code == 201, r.text
        return r.json()["id"]


def _push(server, token, owner, name, eval_id, body: bytes, **headers):
    with server.client(token) as c:
        return c.put(
            f"/api/v1/environments/{owner}/{name}/evals/{eval_id}/rollouts",
            content=body,
            headers={"Content-Type": "application/x-ndjson", **headers},
        )


def _stored(server, eval_id) -> EvalResult:
    with server.hub.db.reader() as s:
        row = s.get(EvalResult, eval_id)
        assert row is not None
        return row


def test_push_list_filter_and_read_one_back(server, env):
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    records = _records()
    body = gzip.compress(_jsonl(records))
    r = _push(server, token, owner, name, eval_id, body, **{"Content-Encoding": "gzip"})
    assert r.status_code == 201, r.text
    pushed = r.json()["rollouts"]
    assert pushed["count"] == 6 and pushed["bytes"] == len(_jsonl(records))
    assert pushed["viewer"] == f"/evals/runs/{eval_id}"

    # at rest: one gzip object in the hub's store (folder or S3) holding exactly the records
    row = _stored(server, eval_id)
    stored = b"".join(server.hub.storage.iter_bytes(row.rollouts_key))
    assert stored[:2] == b"\x1f\x8b" and row.rollouts_stored_bytes == len(stored)
    assert zlib.decompress(stored, 31) == _jsonl(records)
    assert row.version.version == "1.0.0" and row.model == "m-7b"

    base = f"/api/v1/environments/{owner}/{name}/evals/{eval_id}/rollouts"
    with server.client() as anon:  # a public environment: anyone reads its rollouts
        assert (
            anon.get(f"/api/v1/environments/{owner}/{name}/evals").json()["evals"][0]["rollouts"][
                "count"
            ]
            == 6
        )
        page = anon.get(base, params={"reward_max": 0.5}).json()
        assert page["total"] == 3
        assert [x["line"] for x in page["rollouts"]] == [1, 3, 5]
        assert anon.get(base, params={"error": "ToolError"}).json()["total"] == 1
        assert anon.get(base, params={"example": "2"}).json()["total"] == 2
        ranked = anon.get(base, params={"sort": "reward", "order": "desc"}).json()["rollouts"]
        assert [x["reward"] for x in ranked] == [1.0] * 3 + [0.0] * 3
        window = anon.get(
            base, params={"sort": "reward", "order": "desc", "limit": 2, "offset": 2}
        ).json()
        assert [x["line"] for x in window["rollouts"]] == [x["line"] for x in ranked[2:4]]
        assert window["total"] == 6 and (window["offset"], window["limit"]) == (2, 2)
        one = anon.get(f"{base}/3").json()
        assert one["line"] == 3 and one["error"] == "ToolError" and one["reward"] == 0.0
        assert one["record"] == records[3]
        assert anon.get(f"{base}/0").json()["parsed_answer"] == "1"


def test_plain_body_replaces_earlier_rollouts_and_delete_removes_them(server, env):
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    assert _push(server, token, owner, name, eval_id, _jsonl(_records(2))).status_code == 201
    first = _stored(server, eval_id).rollouts_key
    assert _push(server, token, owner, name, eval_id, _jsonl(_records(4))).status_code == 201
    row = _stored(server, eval_id)
    assert row.rollouts_count == 4 and row.rollouts_key != first
    assert not server.hub.storage.exists(first)  # the replaced object is gone
    with server.client(token) as c:
        assert c.delete(f"/api/v1/environments/{owner}/{name}/evals/{eval_id}").status_code == 200
    assert not server.hub.storage.exists(row.rollouts_key)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"reward": 1}\nnot json\n', "line 2 is not JSON"),
        (b'{"reward": 1}\n\n[1, 2]\n', "line 3 is a JSON list, not an object"),
        (b'{"reward": 1}\n{"reward": NaN}\n', "line 2 is not JSON"),
        (b"\n\n", "no records"),
    ],
)
def test_lines_that_are_not_json_objects_are_refused_by_number(server, env, body, fragment):
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    r = _push(server, token, owner, name, eval_id, body)
    assert r.status_code == 400 and fragment in r.json()["detail"], r.text
    assert _stored(server, eval_id).rollouts_key is None  # nothing half-stored


def test_oversized_rollouts_are_refused_with_413(server, env, monkeypatch):
    """Declared too large, streamed past the cap without a length, and a small gzip body
    that inflates past the cap: each 413, nothing stored."""
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    monkeypatch.setattr(server.hub.settings, "max_rollouts_bytes", 4096)
    big = _jsonl([{"i": i, "pad": "x" * 100} for i in range(100)])  # ~12 KB
    r = _push(server, token, owner, name, eval_id, big)
    assert r.status_code == 413 and "4096" in r.json()["detail"]

    def chunks():
        for i in range(0, len(big), 1000):
            yield big[i : i + 1000]

    with server.client(token) as c:  # no Content-Length: counted while it streams
        r = c.put(f"/api/v1/environments/{owner}/{name}/evals/{eval_id}/rollouts", content=chunks())
    assert r.status_code == 413, r.text
    bomb = gzip.compress(_jsonl([{"pad": "y" * 1000}] * 50))
    assert len(bomb) < 4096
    r = _push(server, token, owner, name, eval_id, bomb, **{"Content-Encoding": "gzip"})
    assert r.status_code == 413 and "uncompressed" in r.json()["detail"]
    assert _stored(server, eval_id).rollouts_key is None


def test_who_may_push_rollouts(server, env):
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    body = _jsonl(_records(2))
    _, reader = server.new_user("reader", scope="read")
    _, other = server.new_user("other")
    assert _push(server, None, owner, name, eval_id, body).status_code == 401
    r = _push(server, reader, owner, name, eval_id, body)
    assert r.status_code == 403 and "publish scope" in r.json()["detail"]
    r = _push(server, other, owner, name, eval_id, body)  # publish scope, not the submitter
    assert r.status_code == 403 and "submitter" in r.json()["detail"]
    r = _push(server, token, owner, name, eval_id, body, **{"Content-Encoding": "br"})
    assert r.status_code == 400
    assert _stored(server, eval_id).rollouts_key is None


def test_private_environment_rollouts_are_for_members_only(server, user, uid):
    owner, token = user
    r = publish(server, token, owner, uid, [make_wheel(uid, "1.0.0")], visibility="private")
    assert r.status_code == 201, r.text
    eval_id = _eval(server, token, owner, uid)
    assert _push(server, token, owner, uid, eval_id, _jsonl(_records(2))).status_code == 201
    base = f"/api/v1/environments/{owner}/{uid}/evals/{eval_id}/rollouts"
    _, stranger = server.new_user("stranger")
    for who in (None, stranger):  # not found, exactly like the private environment itself
        with server.client(who) as c:
            assert c.get(base).status_code == 404
            assert c.get(f"{base}/0").status_code == 404
            assert c.get(f"/evals/runs/{eval_id}").status_code == 404
            assert c.get(f"/evals/runs/{eval_id}/rollouts/0").status_code == 404
            assert uid not in c.get("/evals/").text  # nor listed among the runs
    with server.client(token) as c:
        assert c.get(base).json()["total"] == 2
        assert uid in c.get("/evals/").text
        page = c.get(f"/evals/runs/{eval_id}/rollouts/0")
        assert page.status_code == 200 and "What is 0 + 1?" in page.text
        assert "Content-Security-Policy" in page.headers


def test_path_and_key_tricks_find_nothing(server, env, user, uid):
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    assert _push(server, token, owner, name, eval_id, _jsonl(_records(2))).status_code == 201
    # the same eval under another environment's URL
    other = uid + "x"
    r = publish(server, token, owner, other, [make_wheel(other, "1.0.0")])
    assert r.status_code == 201, r.text
    with server.client(token) as c:
        assert (
            c.get(f"/api/v1/environments/{owner}/{other}/evals/{eval_id}/rollouts").status_code
            == 404
        )
        assert _push(server, token, owner, other, eval_id, b"{}\n").status_code == 404
        base = f"/api/v1/environments/{owner}/{name}/evals/{eval_id}/rollouts"
        assert c.get(f"{base}/-1").status_code == 404
        assert c.get(f"{base}/2").status_code == 404
        assert c.get(f"{base}/..%2F..%2Fhub.db").status_code in (404, 422)
        r = c.get(base, params={"sort": "reward; DROP TABLE rollouts"})
        assert r.status_code == 400 and "sort by one of" in r.json()["detail"]
        for key in ("..%2F1", "1%2F..", "%2E%2E", "-1", "1e3", "٣"):
            assert c.get(f"/evals/runs/{key}").status_code == 404, key
        assert c.get(f"/evals/runs/{eval_id}").status_code == 200


def test_a_stored_object_gone_missing_is_not_found_not_a_crash(server, env):
    """The artifact store lost the object (an operator removed it) before anyone read it:
    the viewer and the API answer 404 instead of failing."""
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    assert _push(server, token, owner, name, eval_id, _jsonl(_records(2))).status_code == 201
    server.hub.storage.delete(_stored(server, eval_id).rollouts_key)
    with server.client(token) as c:
        assert c.get(f"/evals/runs/{eval_id}").status_code == 404
        api = f"/api/v1/environments/{owner}/{name}/evals/{eval_id}/rollouts"
        assert c.get(api).status_code == 404


def test_a_gzip_body_of_several_members_keeps_every_record(server, env):
    """gzip allows members back to back (``cat a.gz b.gz``); the second is not dropped (the
    body is stored as sent), and a body cut inside its gzip stream is refused."""
    owner, token, name = env
    eval_id = _eval(server, token, owner, name)
    records = _records(4)
    last = _jsonl(records[2:]).rstrip(b"\n")  # and no newline after the last record
    body = gzip.compress(_jsonl(records[:2])) + gzip.compress(last)
    r = _push(server, token, owner, name, eval_id, body, **{"Content-Encoding": "gzip"})
    assert r.status_code == 201 and r.json()["rollouts"]["count"] == 4, r.text
    api = f"/api/v1/environments/{owner}/{name}/evals/{eval_id}/rollouts"
    with server.client() as c:  # every record reaches the index, the last one too
        assert c.get(api).json()["total"] == 4
        assert c.get(f"{api}/3").json()["record"] == records[3]
    cut = gzip.compress(_jsonl(records))[:-12]
    r = _push(server, token, owner, name, eval_id, cut, **{"Content-Encoding": "gzip"})
    assert r.status_code == 400 and "gzip" in r.json()["detail"]
    assert _stored(server, eval_id).rollouts_count == 4  # the earlier push stands


def test_gc_removes_rollouts_whose_evaluation_went_with_its_version(server, env):
    """Deleting a version deletes its evaluations (a cascade in the database): their stored
    rollouts are then garbage for `prime-hub admin gc`; rollouts still linked stay."""
    import datetime as dt

    owner, token, name = env
    r = publish(server, token, owner, name, [make_wheel(name, "2.0.0")])
    assert r.status_code == 201, r.text
    kept = _eval(server, token, owner, name)
    with server.client(token) as c:
        doomed = c.post(
            f"/api/v1/environments/{owner}/{name}/versions/2.0.0/evals", json=SUMMARY
        ).json()["id"]
    for eval_id in (kept, doomed):
        assert _push(server, token, owner, name, eval_id, _jsonl(_records(2))).status_code == 201
    kept_key, doomed_key = _stored(server, kept).rollouts_key, _stored(server, doomed).rollouts_key
    with server.client(token) as c:
        assert c.delete(f"/api/v1/environments/{owner}/{name}/versions/2.0.0").status_code == 200
    assert server.hub.storage.exists(doomed_key)  # the cascade cannot reach the store
    removed = server.hub.cleanup.collect_garbage(grace=dt.timedelta(0))
    assert doomed_key in removed and not server.hub.storage.exists(doomed_key)
    assert server.hub.storage.exists(kept_key)


def test_a_group_runs_members_keep_their_own_metrics(server, env):
    """A mixture/EnvGroup run: the pushed summary's per-member part (vf-eval's ``by_env``) is
    kept, so the hub's run page gives each member the metrics it records, not the 0.0 the
    group fills in for another member's metric; a malformed member summary is refused."""
    owner, token, name = env
    records = [
        {"example_id": i, "task": task, "reward": 1.0, "error": None,
         "metrics": {"math_ok": 1.0 if task == "math" else 0.0,
                     "code_ok": 1.0 if task == "code" else 0.0}}
        for i, task in enumerate(["math", "code", "math", "code"])
    ]  # fmt: skip
    by_env = {
        "math": {"num_rollouts": 2, "avg_reward": 1.0, "avg_metrics": {"math_ok": 1.0}},
        "code": {"num_rollouts": 2, "avg_reward": 1.0, "avg_metrics": {"code_ok": 1.0}},
    }
    base = f"/api/v1/environments/{owner}/{name}/versions/1.0.0/evals"
    with server.client(token) as c:
        bad = c.post(base, json={**SUMMARY, "by_env": {"math": {"num_rollouts": -1}}})
        assert bad.status_code == 422 and "num_rollouts" in bad.text
        r = c.post(base, json={**SUMMARY, "num_rollouts": 4, "by_env": by_env})
        assert r.status_code == 201, r.text
        assert r.json()["by_env"] == by_env
        eval_id = r.json()["id"]
    assert _push(server, token, owner, name, eval_id, _jsonl(records)).status_code == 201
    with server.client() as anon:
        page = anon.get(f"/evals/runs/{eval_id}").text
    members = page[page.index('id="members"') : page.index("</table>", page.index('id="members"'))]
    math_row = members[members.index(">math<") :].split("</tr>")[0]
    code_row = members[members.index(">code<") :].split("</tr>")[0]
    assert "math_ok" in math_row and "code_ok" not in math_row
    assert "code_ok" in code_row and "math_ok" not in code_row
