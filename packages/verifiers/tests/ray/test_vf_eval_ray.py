"""`vf-eval --ray ADDRESS` (issue 25 item 2): the same evaluation, run as a user runs it (a
subprocess), with its rollouts on environment worker actors of a real 2-node cluster, saves the
same records as the in-process run; an unreachable head is one clear line, not a hang."""

from __future__ import annotations

import subprocess
import sys

import pytest

from verifiers.ray.testing import local_cluster
from verifiers.testing import ScriptedServer, run_vf_eval

# Wall-clock figures differ between any two runs. In process, without group scoring, each
# rollout is written the moment it is scored, before its group's advantage exists (the returned
# records have it); an actor sends a finished group back whole, so its lines carry it.
IGNORED = {"timing", "advantage"}


@pytest.fixture(scope="module")
def cluster():
    with local_cluster([{"num_cpus": 1}]) as c:
        yield c


def _comparable(rows: list[dict]) -> list[dict]:
    rows = sorted(rows, key=lambda r: (r["example_id"], r["rollout_index"]))  # finishing order
    return [{k: v for k, v in r.items() if k not in IGNORED} for r in rows]


def test_vf_eval_on_the_cluster_saves_the_in_process_records(cluster, tmp_path):
    args = ("-n", "6", "-r", "2", "-s")
    (tmp_path / "local").mkdir()
    (tmp_path / "ray").mkdir()
    with ScriptedServer() as server:
        local_rows, local_meta = run_vf_eval(
            tmp_path / "local", "arithmetic", server.base_url, *args
        )
        ray_rows, ray_meta = run_vf_eval(
            tmp_path / "ray", "arithmetic", server.base_url, *args, "--ray", cluster.address
        )
    assert len(ray_rows) == 12
    assert _comparable(ray_rows) == _comparable(local_rows)
    assert ray_meta["avg_reward"] == local_meta["avg_reward"] > 0
    # one worker actor on each of the two nodes (head and worker both have a CPU)
    assert ray_meta["ray"] == {"address": cluster.address, "workers": 2, "nodes": 2}


def test_an_unreachable_head_is_one_line_and_exit_1(tmp_path):
    with ScriptedServer() as server:
        cmd = [sys.executable, "-m", "verifiers.cli.eval", "arithmetic", "-n", "1"]
        cmd += ["-b", server.base_url, "--ray", "127.0.0.1:1", "--no-progress"]
        out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode in (1, 2), out.stderr
    assert any("cannot reach the Ray head at 127.0.0.1:1" in line for line in lines), out.stderr
    assert not any(line.startswith("Traceback") for line in lines), out.stderr


def test_bad_ray_options_are_usage_errors(tmp_path):
    cmd = [sys.executable, "-m", "verifiers.cli.eval", "arithmetic", "--ray", "auto"]
    cmd += ["--ray-resources", '{"sandbox": "many"}']
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "--ray-resources values must be non-negative numbers" in out.stderr
