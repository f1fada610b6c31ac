"""vf-eval end to end: a real subprocess against a scripted server on loopback."""

import asyncio
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from command_kit import run_command, vf_eval, vf_eval_cmd

from verifiers.testing import ArithmeticResponder, GateResponder, ScriptedServer, free_port


def arithmetic(base_url, n, r, *more) -> tuple:
    """vf-eval's arguments for `n` examples x `r` rollouts of "arithmetic" by model "m"."""
    return ("arithmetic", "-m", "m", "-b", base_url, "-n", n, "-r", r, *more)


def run_dirs(tmp_path, env="arithmetic", model="m"):
    base = tmp_path / "outputs" / "evals" / f"{env}--{model}"
    return sorted(base.iterdir()) if base.exists() else []


def read_lines(path: Path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_eval_writes_results_and_metadata(tmp_path, server):
    proc = vf_eval(*arithmetic(server.base_url, 6, 2, "-c", 4, "-t", 128, "-T", 0.5), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "reward" in proc.stdout and "pass@2" in proc.stdout
    (run,) = run_dirs(tmp_path)
    rows = read_lines(run / "results.jsonl")
    assert len(rows) == 12
    assert {(r["example_id"], r["rollout_index"]) for r in rows} == {
        (i, j) for i in range(6) for j in range(2)
    }
    assert all(r["reward"] == 1.0 and r["error"] is None for r in rows)
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["status"] == "complete" and meta["num_rollouts"] == 12
    assert meta["env_id"] == "arithmetic" and meta["model"] == "m"
    assert "num_examples_requested" not in meta  # only when -n asked for more than there is
    assert meta["sampling_args"] == {"max_tokens": 128, "temperature": 0.5}
    assert server.requests[-1]["max_tokens"] == 128 and server.requests[-1]["temperature"] == 0.5


def test_sampling_args_json_and_env_args(tmp_path, server):
    """upstream 0.3.1 legacy/scripts/eval.py: --env-args is -a, --sampling-args is -S."""
    proc = vf_eval(
        *arithmetic(
            server.base_url,
            2,
            1,
            "-a",
            '{"num_examples": 2, "seed": 3}',
            "-S",
            '{"top_p": 0.9}',
        ),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert server.requests[-1]["top_p"] == 0.9
    meta = json.loads((run_dirs(tmp_path)[0] / "metadata.json").read_text())
    assert meta["env_args"] == {"num_examples": 2, "seed": 3}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env-args", "{not json"], "--env-args is not valid JSON"),
        (["--env-args", "[1]"], "--env-args must be a JSON object"),
        (["-S", "nope"], "--sampling-args is not valid JSON"),
        (["-a", '{"top_p": 0.9}'], "does not take 'top_p'"),
        (["--env-args", '{"colour": 1}'], "does not take 'colour'"),
        (["--header", "broken"], "--header must look like"),
    ],
)
def test_bad_command_lines_get_one_clear_line(tmp_path, server, args, message):
    proc = vf_eval("arithmetic", "-b", server.base_url, *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_environment(tmp_path, server):
    proc = vf_eval("definitely-not-installed-env", "-b", server.base_url, cwd=tmp_path)
    assert proc.returncode == 1
    assert "no environment 'definitely-not-installed-env'" in proc.stderr
    assert "Traceback" not in proc.stderr


def closed_url() -> str:
    """The URL of a port nothing listens on (bound to get a free number, then closed)."""
    return f"http://127.0.0.1:{free_port()}/v1"


def test_closed_port_fails_before_anything_runs(tmp_path):
    """Connection refused is not transient: with the default retries (5 per request, 3 per
    rollout) vf-eval stops at once, naming the URL, and writes no run."""
    url = closed_url()
    proc = vf_eval(*arithmetic(url, 2, 1), cwd=tmp_path)
    assert proc.returncode == 1
    assert f"cannot reach the model endpoint: connection refused at {url}" in proc.stderr
    assert "-b/--api-base-url" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "outputs").exists()


def write_endpoints(path: Path, *urls: str) -> Path:
    path.write_text(
        "".join(
            f'[[endpoint]]\nendpoint_id = "pair"\nmodel = "real-model"\nurl = "{u}"\nkey = "NONE"\n'
            for u in urls
        )
    )
    return path


def test_refused_replica_is_skipped(tmp_path, server):
    """Round robin over a dead and a live replica: a warning names the dead one, every rollout
    runs on the live one."""
    dead = closed_url()
    cfg = write_endpoints(tmp_path / "endpoints.toml", dead, server.base_url)
    proc = vf_eval("arithmetic", "-m", "pair", "-e", cfg, "-n", 4, "-r", 2, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"warning: connection refused at {dead}" in proc.stderr
    assert server.request_count == 8
    assert proc.stderr.count(dead) == 1  # one warning, not one per request
    (run,) = run_dirs(tmp_path, model="real-model")
    assert all(r["error"] is None for r in read_lines(run / "results.jsonl"))


def test_every_replica_refused_fails_naming_each(tmp_path):
    urls = [closed_url(), closed_url()]
    cfg = write_endpoints(tmp_path / "endpoints.toml", *urls)
    proc = vf_eval("arithmetic", "-m", "pair", "-e", cfg, "-n", 2, "-r", 1, cwd=tmp_path)
    assert proc.returncode == 1
    assert "no endpoint can be reached" in proc.stderr
    assert all(f"connection refused at {u}" in proc.stderr for u in urls)
    assert f"endpoint 'pair' of {cfg}" in proc.stderr


def test_endpoint_that_dies_mid_run_is_reported_per_rollout(tmp_path):
    """The server goes away while requests are in flight: the dropped request is retried, finds
    the port closed, and each rollout records the infra error; exit status 1, no traceback."""
    gate = GateResponder()
    gate.hold("")  # every request waits
    with ScriptedServer(gate) as srv:
        proc = subprocess.Popen(
            vf_eval_cmd(*arithmetic(srv.base_url, 2, 1, "--max-retries", 0)),
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while srv.request_count < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert srv.request_count == 2
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "every rollout failed" in err and "Traceback" not in err
    rows = read_lines(run_dirs(tmp_path)[0] / "results.jsonl")
    assert len(rows) == 2
    assert all(r["error"]["error"] == "EndpointUnreachableError" for r in rows), rows
    assert all(r["error"]["infra"] for r in rows)


def test_endpoints_file_round_robin(tmp_path):
    with ScriptedServer() as a, ScriptedServer() as b:
        cfg = tmp_path / "endpoints.toml"
        cfg.write_text(
            f'[[endpoint]]\nendpoint_id = "pair"\nmodel = "real-model"\nurl = "{a.base_url}"\nkey = "NONE"\n'
            f'[[endpoint]]\nendpoint_id = "pair"\nmodel = "real-model"\nurl = "{b.base_url}"\nkey = "NONE"\n'
        )
        proc = vf_eval("arithmetic", "-m", "pair", "-e", cfg, "-n", 4, "-r", 2, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert a.request_count == 4 and b.request_count == 4
        assert {r["model"] for r in a.requests} == {"real-model"}


class AnswersFirst:
    """Answers the first `n` requests and holds the rest until `release()`: a run stopped after
    `n` results is certainly unfinished, however loaded the machine (a timed latency raced)."""

    def __init__(self, n: int) -> None:
        self.n, self.seen = n, 0
        self.go = threading.Event()  # set from the test's thread, read in the server's loop
        self.answer = ArithmeticResponder()

    def release(self) -> None:
        self.go.set()

    async def __call__(self, body):
        self.seen += 1
        while self.seen > self.n and not self.go.is_set():
            await asyncio.sleep(0.02)
        return self.answer(body)


def start_slow_eval(tmp_path, server, n=40):
    cmd = vf_eval_cmd(*arithmetic(server.base_url, n, 1, "-c", 4))
    return subprocess.Popen(
        cmd,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )


def default_sigint() -> None:
    """Ctrl-C as a terminal sends it, even where the suite runs as a background job (whose
    children start with SIGINT ignored, so Python would install no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_lines(tmp_path, at_least, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dirs = run_dirs(tmp_path)
        if dirs and (dirs[0] / "results.jsonl").exists():
            if len(read_lines(dirs[0] / "results.jsonl")) >= at_least:
                return dirs[0]
        time.sleep(0.05)
    raise AssertionError("vf-eval wrote no results in time")


def test_kill_mid_run_then_resume(tmp_path):
    answers = AnswersFirst(8)
    with ScriptedServer(answers) as server:
        proc = start_slow_eval(tmp_path, server)
        run = wait_for_lines(tmp_path, 8)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        done_before = read_lines(run / "results.jsonl")
        assert len(done_before) == 8
        answers.release()
        server.clear()
        before = server.request_count

        proc = vf_eval(*arithmetic(server.base_url, 40, 1, "-c", 8, "--resume"), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        rows = read_lines(run / "results.jsonl")
        keys = [(r["example_id"], r["rollout_index"]) for r in rows]
        assert len(keys) == len(set(keys)) == 40  # nothing repeated, nothing missing
        assert server.request_count - before == 40 - len(done_before)
        assert json.loads((run / "metadata.json").read_text())["status"] == "complete"


def test_interrupt_saves_finished_rollouts(tmp_path):
    with ScriptedServer(AnswersFirst(4)) as server:
        proc = start_slow_eval(tmp_path, server)
        run = wait_for_lines(tmp_path, 4)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "--resume" in err
        meta = json.loads((run / "metadata.json").read_text())
        assert meta["status"] == "interrupted"
        assert meta["num_rollouts"] == len(read_lines(run / "results.jsonl")) == 4


def test_resume_refuses_a_different_run(tmp_path, server):
    assert vf_eval(*arithmetic(server.base_url, 2, 1), cwd=tmp_path).returncode == 0
    run = run_dirs(tmp_path)[0]
    proc = vf_eval(*arithmetic(server.base_url, 3, 1, "--resume", run), cwd=tmp_path)
    assert (
        proc.returncode == 2 and "was a different run (num_examples: run 2 vs now 3)" in proc.stderr
    )


def test_resume_with_nothing_to_resume_starts_a_new_run(tmp_path, server):
    """upstream 0.3.1 legacy/scripts/eval.py: a bare --resume with no matching incomplete run
    starts a new run."""
    proc = vf_eval(*arithmetic(server.base_url, 2, 1, "--resume"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "no unfinished run" in proc.stderr and "starting a new one" in proc.stderr
    (run,) = run_dirs(tmp_path)
    assert len(read_lines(run / "results.jsonl")) == 2


def test_openai_base_url_from_environment(tmp_path, server):
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
    proc = vf_eval("arithmetic", "-m", "m", "-n", 1, "-r", 1, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert server.request_count == 1


def test_demo_runs_and_says_replies_are_scripted(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    proc = run_command("verifiers.demo", "--no-progress", "-n", 8, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "SCRIPTED stand-in server, not a model" in proc.stdout
    rows = read_lines(run_dirs(tmp_path, model="scripted-model")[0] / "results.jsonl")
    assert len(rows) == 32
