"""Issues 7 and 8: every reference environment under environments/ installs with `prime env
install` from a hub and runs with vf-eval.

One hub (the session's), every package pushed from a copy with `prime env push`, all of them
installed by name into one fresh virtualenv with ONE `prime env install` command, then:

* the installed versions are the hub's, and every file of each wheel the hub serves is
  installed byte for byte;
* `vf.load_environment(name, source="sample")` works for each (one subprocess, a line per env);
* `prime eval owner/name --push` (vf-eval in that venv, 2 examples × 2 rollouts) for each:
  the ones without a judge against the arithmetic stand-in (`scripted_model`: wrong answers,
  0 rewards, no errors); i3-code against an "oracle" model that writes one right and one wrong
  program, graded in the local sandbox; hle and deepdive (judge-based) with the oracle and a
  judge port where nothing listens (every rollout an infra error, no fake 0) and with a scripted
  judge that compares the answer with the gold answer it is sent (deepdive also runs its search
  tool over the bundled corpus).

Evaluations run concurrently (they wait mostly on subprocesses); bytecode is cached under a
temporary prefix. About 90 s on a loaded 2-core machine.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import shutil
import subprocess
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx
import pytest
from e2e_kit import ROOT, Prime, base_env, free_port, install_sdk, run_py, uv

OWNER = "refs"
ENVS_DIR = ROOT / "environments"
NAMES = sorted(p.parent.name for p in ENVS_DIR.glob("*/pyproject.toml"))
PUSH_WORKERS = 3
EVAL_WORKERS = 4
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # the bundled samples only


def pyproject_version(name: str) -> str:
    return tomllib.loads((ENVS_DIR / name / "pyproject.toml").read_text())["project"]["version"]


def test_every_reference_environment_is_here():
    # the list the issues name; a new package under environments/ is covered automatically
    assert set(NAMES) >= {
        "aime", "deepdive", "gpqa", "hle", "i3-code", "i3-logic", "i3-math", "i3-science",
        "livecodebench", "mini-swe-agent-plus", "mmlu-pro",
    }  # fmt: skip


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def author(prime_as) -> Prime:  # type: ignore[no-untyped-def]
    # the tests run `prime` and vf-eval some thirty times: the session's bytecode cache
    # (e2e_kit.bytecode_cache, in every base_env()) saves compiling the same modules each time
    return prime_as(OWNER)


@pytest.fixture(scope="module")
def pushed(author: Prime, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every package under environments/ pushed from a copy (the checkout is never touched);
    returns name → the hub's record of it (environment and versions, from its public API)."""
    work = tmp_path_factory.mktemp("reference-src")  # not a git work tree: no dirty check

    def push(name: str) -> str | None:
        src = work / name
        shutil.copytree(
            ENVS_DIR / name,
            src,
            ignore=shutil.ignore_patterns("dist", "__pycache__", ".venv", "outputs", "*.egg-info"),
        )
        r = author("env", "push", src, cwd=work)
        if r.rc != 0 or f"published {OWNER}/{name} {pyproject_version(name)}" not in r.out:
            return f"{name}: exit {r.rc}\n{r.out}{r.err}"
        return None

    # a few at a time: each push is mostly a `uv build` subprocess
    with ThreadPoolExecutor(PUSH_WORKERS) as pool:
        failed = [f for f in pool.map(push, NAMES) if f]
    assert not failed, "\n".join(failed)
    with httpx.Client(base_url=author.hub.url, timeout=30) as http:  # the hub's public API
        return {name: hub_info(http, name) for name in NAMES}


def hub_info(http: httpx.Client, name: str) -> dict:
    """What `prime env info --json` shows: the environment and its versions (with files)."""
    env = http.get(f"/api/v1/environments/{OWNER}/{name}").raise_for_status().json()
    versions = http.get(f"/api/v1/environments/{OWNER}/{name}/versions").raise_for_status()
    return {"environment": env, "versions": versions.json()["versions"]}


def hub_wheel(info: dict) -> dict:
    (latest,) = [
        v for v in info["versions"] if v["version"] == info["environment"]["latest_version"]
    ]
    (wheel,) = [f for f in latest["files"] if f["kind"] == "wheel"]
    return wheel


@pytest.fixture(scope="module")
def installed(
    pushed: dict[str, dict], author: Prime, verifiers_wheel: Path, tmp_path_factory
) -> tuple[Path, str]:
    """One fresh virtualenv with our SDK, then ALL reference environments by name in one
    `prime env install`. Returns (python, the command's stdout)."""
    venv = tmp_path_factory.mktemp("reference-venv") / "venv"
    subprocess.run([uv(), "venv", "-q", str(venv)], check=True, env=base_env(), capture_output=True)
    python = venv / "bin" / "python"
    install_sdk(python, verifiers_wheel)
    refs = [f"{OWNER}/{name}" for name in NAMES]
    r = author("env", "install", *refs, "--python", python).ok()
    # compiled once before the concurrent vf-eval runs below import the same modules
    modules = ["verifiers.cli.eval", *(name.replace("-", "_") for name in NAMES)]
    warm = base_env() | OFFLINE
    subprocess.run([str(python), "-c", f"import {', '.join(modules)}"], env=warm, check=False)
    return python, r.out


# ------------------------------------------------------------------ install
def test_push_published_every_package_at_its_version(pushed):
    for name, info in pushed.items():
        assert info["environment"]["latest_version"] == pyproject_version(name), name
        kinds = sorted(f["kind"] for v in info["versions"] for f in v["files"])
        assert kinds == ["sdist", "wheel"], (name, kinds)


def test_one_install_command_installs_all_at_the_hubs_version(installed, pushed):
    python, out = installed
    versions = json.loads(
        run_py(
            python,
            "import importlib.metadata as m, json, sys\n"
            f"print(json.dumps({{n: m.version(n) for n in {NAMES!r}}}))",
        ).stdout
    )
    for name, info in pushed.items():
        version = info["environment"]["latest_version"]
        wheel = hub_wheel(info)
        assert versions[name] == version, name
        line = f"installed {OWNER}/{name} {version} (sha256 {wheel['sha256'][:12]}…) with uv"
        assert line in out, (line, out)


INSTALLED_FILES = """
import hashlib, importlib.metadata as m, json, sys
out = {}
for name in sys.argv[1:]:
    dist = m.distribution(name)
    out[name] = {
        str(f): hashlib.sha256(f.locate().read_bytes()).hexdigest()
        for f in dist.files or []
        if f.locate().is_file()
    }
print(json.dumps(out))
"""


def test_installed_files_are_the_hubs_wheel_bytes(installed, pushed, hub):
    """Each wheel as the hub serves it (checked against the hub's sha256) and the installed
    files: every file of the wheel is installed byte for byte (RECORD aside, which installers
    rewrite)."""
    python, _ = installed
    r = subprocess.run(
        [str(python), "-c", INSTALLED_FILES, *NAMES],
        capture_output=True, text=True, env=base_env(), timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    on_disk = json.loads(r.stdout)
    with httpx.Client(base_url=hub.url, timeout=60) as http:
        for name, info in pushed.items():
            wheel = hub_wheel(info)
            data = http.get(wheel["url"]).raise_for_status().content
            assert hashlib.sha256(data).hexdigest() == wheel["sha256"], name
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                files = {
                    i.filename: hashlib.sha256(zf.read(i)).hexdigest()
                    for i in zf.infolist()
                    if not i.is_dir() and not i.filename.endswith(".dist-info/RECORD")
                }
            assert any(p.endswith("/__init__.py") for p in files), name
            mismatched = {p for p, h in files.items() if on_disk[name].get(p) != h}
            assert not mismatched, (name, sorted(mismatched))


def test_hub_sdists_hold_the_same_package_files(pushed, hub):
    """The source archive (what `prime env pull` extracts, and the install fallback) has every
    file the wheel installs, with the same bytes, and the pyproject.toml."""
    with httpx.Client(base_url=hub.url, timeout=60) as http:
        for name, info in pushed.items():
            (latest,) = [v for v in info["versions"] if v["version"] == pyproject_version(name)]
            files = {f["kind"]: f for f in latest["files"]}
            blobs = {}
            for kind, f in files.items():
                blobs[kind] = http.get(f["url"]).raise_for_status().content
                assert hashlib.sha256(blobs[kind]).hexdigest() == f["sha256"], (name, kind)
            with zipfile.ZipFile(io.BytesIO(blobs["wheel"])) as zf:
                wheel = {
                    i.filename: zf.read(i)
                    for i in zf.infolist()
                    if not i.is_dir() and ".dist-info/" not in i.filename
                }
            with tarfile.open(fileobj=io.BytesIO(blobs["sdist"])) as tf:
                top = f"{name.replace('-', '_')}-{pyproject_version(name)}/"
                sdist = {
                    m.name.removeprefix(top): tf.extractfile(m).read()  # type: ignore[union-attr]
                    for m in tf.getmembers()
                    if m.isfile()
                }
            assert "pyproject.toml" in sdist and "README.md" in sdist, (name, sorted(sdist))
            assert any(p.endswith(".jsonl") for p in wheel), (name, sorted(wheel))  # a sample
            missing = sorted(p for p, data in wheel.items() if sdist.get(p) != data)
            assert not missing, (name, missing)


# ------------------------------------------------------------------ load
LOAD_ALL = """
import json, sys, traceback
import verifiers as vf
for name in sys.argv[1:]:
    try:
        env = vf.load_environment(name, source="sample")
        ds = env.get_eval_dataset() if env.eval_dataset is not None else env.get_dataset()
        row = {"env": name, "ok": True, "type": type(env).__name__, "rows": len(ds)}
    except Exception as exc:
        row = {"env": name, "ok": False, "error": repr(exc), "tb": traceback.format_exc()}
    print(json.dumps(row), flush=True)
"""


def test_load_environment_sample_works_for_every_one(installed):
    python, _ = installed
    r = subprocess.run(
        [str(python), "-c", LOAD_ALL, *NAMES],
        capture_output=True, text=True, env=base_env() | OFFLINE, timeout=300,
    )  # fmt: skip
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    for row in rows:  # a clear per-environment report (pytest shows it on failure)
        print(f"{row['env']:22} {'ok' if row['ok'] else 'FAILED'} "
              f"{row.get('type') or row.get('error')} {row.get('rows', '')}")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert [row["env"] for row in rows] == NAMES
    failed = [f"{row['env']}: {row['tb']}" for row in rows if not row["ok"]]
    assert not failed, "\n".join(failed)
    assert all(row["rows"] > 0 for row in rows), rows


# ------------------------------------------------------------------ an oracle and a judge
def sample_rows(name: str, module: str, file: str = "sample.jsonl") -> list[dict]:
    path = ENVS_DIR / name / module / "data" / file
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


HLE_RIGHT = sample_rows("hle", "hle")[0]  # the oracle answers this one right, the others wrong
DEEPDIVE = {row["question"]: row["answer"] for row in sample_rows("deepdive", "deepdive")}
DEEPDIVE_RIGHT = sample_rows("deepdive", "deepdive")[1]["question"]
SUM_TASK = "print their sum"  # i3-code: solved right; every other task gets a wrong program
SUM_CODE = "a, b = map(int, input().split())\nprint(a + b)"


def oracle(body: dict):  # type: ignore[no-untyped-def]
    """A scripted model that knows some answers: i3-code programs, hle answers, and a deepdive
    researcher (one search, then `finish`)."""
    from verifiers.testing import Reply

    messages = body.get("messages") or []
    user = next(m["content"] for m in messages if m["role"] == "user")
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    if body.get("tools"):  # deepdive
        if not any(m["role"] == "assistant" for m in messages):
            return Reply(tool_calls=[{"name": "search", "arguments": {"query": user[:200]}}])
        question = next(q for q in DEEPDIVE if q in user)
        answer = DEEPDIVE[question] if question == DEEPDIVE_RIGHT else "Varnholt"
        return Reply(tool_calls=[{"name": "finish", "arguments": {"final_answer": answer}}])
    if "Exact Answer" in system:  # hle
        answer = HLE_RIGHT["answer"] if HLE_RIGHT["question"] in user else "42"
        return f"Explanation: known.\nExact Answer: {answer}\nConfidence: 90%"
    code = SUM_CODE if SUM_TASK in user else "print('no idea')"
    return f"```python\n{code}\n```"


def grading_judge(body: dict) -> str:
    """A judge that really compares the response with the ground truth it was sent:
    hle's JSON verdict, or the yes/no of verifiers' JudgeRubric (deepdive)."""
    text = body["messages"][-1]["content"]
    hle = re.search(r"\[correct_answer\]:\n(.*?)\n\n\[response\]:\n(.*?)\n\nReply with", text, re.S)
    if hle:
        gold, response = hle.groups()
        said = re.search(r"Exact Answer: (.*)", response)
        extracted = said.group(1).strip() if said else "None"
        return json.dumps({
            "extracted_final_answer": extracted, "reasoning": "compared",
            "correct": "yes" if extracted == gold.strip() else "no", "confidence": 90,
        })  # fmt: skip
    gold = re.search(r"Ground truth answer:\n```\n(.*?)\n```", text, re.S)
    response = re.search(r"Response:\n```\n(.*?)\n```", text, re.S)
    assert gold and response, text
    return "yes" if gold.group(1).strip() == response.group(1).strip() else "no"


@pytest.fixture(scope="module")
def oracle_model() -> Iterator[str]:
    from verifiers.testing import ScriptedServer

    with ScriptedServer(oracle) as srv:
        yield srv.base_url


@pytest.fixture(scope="module")
def judge_url() -> Iterator[str]:
    from verifiers.testing import ScriptedServer

    with ScriptedServer(grading_judge) as srv:
        yield srv.base_url


# ------------------------------------------------------------------ evaluate
@dataclass
class EvalRun:
    """One `prime eval owner/name --push` (vf-eval in the venv) and what it left."""

    name: str
    model: str  # "scripted" (arithmetic stand-in) or "oracle"
    judge: str | None = None  # None, "dead" (nothing listens) or "scripted"
    rc: int = -1
    out: str = ""
    err: str = ""
    run_dir: Path | None = None
    meta: dict = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)

    def show(self) -> str:
        """(example, rollout, reward, error name and whether it is infra) per row."""
        rows = [
            (r["example_id"], r["rollout_index"], r["reward"],
             r["error"] and (r["error"]["error"], r["error"].get("infra")))
            for r in self.rows
        ]  # fmt: skip
        return f"{self.name} {self.model} judge={self.judge}: exit {self.rc} {rows}\n{self.err}"

    def rewards(self) -> list[float | None]:
        ordered = sorted(self.rows, key=lambda r: (r["example_id"], r["rollout_index"]))
        return [r["reward"] for r in ordered]


# the ones that need no judge: against the arithmetic stand-in
SCRIPTED = [
    "aime",
    "gpqa",
    "i3-logic",
    "i3-math",
    "i3-science",
    "livecodebench",
    "mini-swe-agent-plus",
    "mmlu-pro",
]
# deepdive's judge client takes a retry count (hle's retries a dead judge with backoff); its
# oracle researcher answers with the finish tool, off by default as upstream
JUDGE_OPTS: dict[str, dict] = {
    "hle": {},
    "deepdive": {"judge_max_retries": 0, "finish_with_tool": True},
}
RUNS = [
    *(EvalRun(name, "scripted") for name in SCRIPTED),
    EvalRun("i3-code", "oracle"),
    *(EvalRun(name, "oracle", judge) for name in JUDGE_OPTS for judge in ("dead", "scripted")),
]


@pytest.fixture(scope="module")
def evals(
    installed, author, scripted_model, oracle_model, judge_url, tmp_path_factory
) -> dict[tuple[str, str, str | None], EvalRun]:
    """All the runs at once (each waits mostly on its subprocess), 2 examples × 2 rollouts."""
    python, _ = installed

    def run(spec: EvalRun) -> EvalRun:
        cwd = tmp_path_factory.mktemp(f"eval-{spec.name}-{spec.judge}")
        env_args: dict[str, object] = {"source": "sample"}
        extra: list[str] = []
        if spec.judge:
            dead = f"http://127.0.0.1:{free_port()}/v1"
            env_args |= JUDGE_OPTS[spec.name] | {
                "judge_base_url": dead if spec.judge == "dead" else judge_url,
                "judge_model": "judge",
            }
            extra = ["--max-retries", "0"] if spec.judge == "dead" else []
        base_url = scripted_model if spec.model == "scripted" else oracle_model
        r = author(
            "eval", f"{OWNER}/{spec.name}", "--push", "--python", python, "-m", spec.model,
            "-b", base_url, "-n", "2", "-r", "2", "--no-progress",
            "--env-args", json.dumps(env_args), *extra,
            cwd=cwd, OPENAI_API_KEY="not-needed", **OFFLINE,
        )  # fmt: skip
        spec.rc, spec.out, spec.err = r.rc, r.out, r.err
        found = list(cwd.glob("outputs/evals/*/*"))
        if len(found) == 1:
            spec.run_dir = found[0]
            spec.meta = json.loads((found[0] / "metadata.json").read_text())
            lines = (found[0] / "results.jsonl").read_text().splitlines()
            spec.rows = [json.loads(line) for line in lines]
        return spec

    with ThreadPoolExecutor(EVAL_WORKERS) as pool:
        done = list(pool.map(run, [replace(spec) for spec in RUNS]))
    return {(r.name, r.model, r.judge): r for r in done}


def check_complete(run: EvalRun) -> None:
    """One results row per rollout (2 examples × 2 rollouts), each (example, rollout) once."""
    assert run.run_dir is not None, run.show()
    assert run.meta["status"] == "complete" and run.meta["num_rollouts"] == 4, run.show()
    assert sorted((r["example_id"], r["rollout_index"]) for r in run.rows) == [
        (0, 0), (0, 1), (1, 0), (1, 1)
    ], run.show()  # fmt: skip


def check_pushed(run: EvalRun) -> None:
    assert run.rc == 0, run.show()
    assert f"for {OWNER}/{run.name} {pyproject_version(run.name)}" in run.out, run.out


@pytest.mark.parametrize("name", SCRIPTED)
def test_vf_eval_against_the_scripted_model(name, evals):
    """The arithmetic stand-in answers these wrongly: 0 rewards, every rollout recorded, none
    with an error, the summary pushed to the hub."""
    run = evals[name, "scripted", None]
    print(run.show())
    check_pushed(run)
    check_complete(run)
    assert all(r["error"] is None for r in run.rows), run.show()
    assert run.rewards() == [0.0] * 4, run.show()


def test_i3_code_grades_programs_in_the_sandbox(evals, author):
    """i3-code from the hub: the right program passes every test in the local sandbox, the
    wrong one fails them; no infrastructure errors; `prime env info` shows the result."""
    run = evals["i3-code", "oracle", None]
    print(run.show())
    check_pushed(run)
    check_complete(run)
    assert all(r["error"] is None for r in run.rows), run.show()
    assert run.rewards() == [1.0, 1.0, 0.0, 0.0], run.show()
    assert sorted(r["metrics"]["pass_rate"] for r in run.rows) == [0.0, 0.0, 1.0, 1.0]
    info = json.loads(author("env", "info", f"{OWNER}/i3-code", "--json").ok().out)
    assert run.run_dir is not None
    (record,) = [e for e in info["evals"] if e["run_id"] == run.run_dir.name]
    assert record["version"] == pyproject_version("i3-code") and record["num_rollouts"] == 4
    assert record["reward_mean"] == 0.5 and record["num_errors"] == 0


@pytest.mark.parametrize("name", sorted(JUDGE_OPTS))
def test_judged_env_without_a_reachable_judge_records_infra_errors(name, evals):
    """Every rollout has an answer for the judge and nothing listens on the judge's port: each
    rollout is an infrastructure error with no reward (never a fake 0). vf-eval then exits 1
    ("every rollout failed") and `prime eval` pushes nothing, as documented."""
    run = evals[name, "oracle", "dead"]
    print(run.show())
    assert run.rc == 1 and "every rollout failed" in run.err, run.show()
    assert "nothing pushed" in run.err, run.show()
    check_complete(run)
    for r in run.rows:
        assert r["error"] is not None and r["error"]["infra"] is True, run.show()
        assert "JudgeError" in r["error"]["message"], run.show()
        assert r["reward"] is None or math.isnan(r["reward"]), run.show()


JUDGED = {"hle": [1.0, 1.0, 0.0, 0.0], "deepdive": [0.0, 0.0, 1.0, 1.0]}


@pytest.mark.parametrize("name", sorted(JUDGE_OPTS))
def test_judged_env_with_a_scripted_judge(name, evals):
    """The judge compares the oracle's answers with the gold answers it is sent: the right one
    scores 1, the wrong one 0, no errors."""
    run = evals[name, "oracle", "scripted"]
    print(run.show())
    check_pushed(run)
    check_complete(run)
    assert all(r["error"] is None for r in run.rows), run.show()
    assert run.rewards() == JUDGED[name], run.show()
    if name == "deepdive":  # the research tools ran: one search over the corpus, then finish
        assert all(r["metrics"]["search_calls"] == 1.0 for r in run.rows), run.rows[0]["metrics"]
        tool_replies = [m for m in run.rows[0]["completion"] if m["role"] == "tool"]
        assert tool_replies and tool_replies[0]["content"].startswith("Result 0:"), tool_replies
