"""mini-swe-agent-plus: grading tables, bad input, and scripted agents driving real rollouts in
the local sandbox (one evaluation run shared by the scenario tests) plus one vf-eval run."""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from pathlib import Path

import pytest
from mini_swe_agent_plus import (
    SENTINEL,
    decide,
    grading_tree,
    is_protected,
    load_environment,
    load_tasks,
    parse_pytest_summary,
    task_from_row,
)
from mini_swe_agent_plus.env import first_words
from mini_swe_agent_plus.grading import truncate_middle
from mini_swe_testkit import scenario_agent

import verifiers as vf
from verifiers import ConfigError
from verifiers.testing import Reply, ScriptedServer, run_vf_eval, scripted_eval
from verifiers.testing.responders import message_text

SAMPLE = Path(__file__).resolve().parent.parent / "mini_swe_agent_plus" / "data" / "sample.jsonl"
ROWS = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
BY_ID = {r["instance_id"]: r for r in ROWS}


# -- grading tables -----------------------------------------------------------------------------
LOG = """\
============================= test session starts ==============================
collected 5 items

tests/test_a.py ..F.E                                                    [100%]
PASSED tests/test_a.py::test_fake_before_summary
=========================== short test summary info ============================
\x1b[32mPASSED\x1b[0m tests/test_a.py::test_one
PASSED tests/test_a.py::TestK::test_two
FAILED tests/test_a.py::test_three - AssertionError: assert 1 == 2 - extra
ERROR tests/test_a.py::test_four - RuntimeError: boom
PASSED tests/test_a.py::test_p[a - b]
XFAIL tests/test_a.py::test_known - bug 12
SKIPPED [1] tests/test_a.py:40: no network
==================== 1 failed, 3 passed, 1 error in 0.12s =====================
PASSED tests/test_a.py::test_after_summary
"""


def test_pytest_summary_parser():
    got = parse_pytest_summary(LOG)
    assert got == {
        "tests/test_a.py::test_one": "PASSED",
        "tests/test_a.py::TestK::test_two": "PASSED",
        "tests/test_a.py::test_three": "FAILED",
        "tests/test_a.py::test_four": "ERROR",
        "tests/test_a.py::test_p[a": "PASSED",  # " - " inside a parameter id is cut, as upstream
        "tests/test_a.py::test_known": "XFAIL",
    }
    assert parse_pytest_summary("collected 0 items\nsegfault\n") == {}
    assert parse_pytest_summary("") == {}


def _task(**kw):
    row = {
        "instance_id": "t",
        "problem_statement": "fix it",
        "repo_files": {"m.py": "X = 1\n"},
        "hidden_tests": {"tests/test_h.py": "def test_a(): pass\n"},
        "FAIL_TO_PASS": ["tests/test_h.py::test_a"],
        "PASS_TO_PASS": ["tests/test_h.py::test_b"],
    }
    row.update(kw)
    return task_from_row(row)


@pytest.mark.parametrize(
    ("results", "solved"),
    [
        ({"tests/test_h.py::test_a": "PASSED", "tests/test_h.py::test_b": "PASSED"}, True),
        ({"tests/test_h.py::test_a": "XFAIL", "tests/test_h.py::test_b": "PASSED"}, True),
        ({"tests/test_h.py::test_a": "FAILED", "tests/test_h.py::test_b": "PASSED"}, False),
        ({"tests/test_h.py::test_a": "PASSED", "tests/test_h.py::test_b": "FAILED"}, False),
        ({"tests/test_h.py::test_a": "PASSED", "tests/test_h.py::test_b": "ERROR"}, False),
        ({"tests/test_h.py::test_a": "PASSED"}, False),  # a PASS_TO_PASS test did not run
        ({"tests/test_h.py::test_a": "XPASS", "tests/test_h.py::test_b": "PASSED"}, False),
        ({}, False),
    ],
)
def test_decide_swebench(results, solved):
    assert decide(_task(), results).solved is solved


@pytest.mark.parametrize(
    ("results", "solved"),
    [
        ({"tests/test_h.py::test_a": "PASSED", "tests/test_h.py::K::test_b": "FAILED"}, True),
        ({"tests/test_h.py::test_a": "PASSED", "tests/test_h.py::K::test_b": "PASSED"}, False),
        ({"tests/test_h.py::test_a": "PASSED"}, False),
        (
            {
                "tests/test_h.py::test_a": "PASSED",
                "tests/test_h.py::K::test_b": "FAILED",
                "tests/test_h.py::test_extra": "PASSED",
            },
            False,
        ),
    ],
)
def test_decide_r2e_expected_output(results, solved):
    # R2E-Gym names tests without the file; the expected status must match exactly
    task = _task(
        FAIL_TO_PASS=None,
        PASS_TO_PASS=None,
        expected_output_json=json.dumps({"test_a": "PASSED", "K::test_b": "FAILED"}),
    )
    assert decide(task, results).solved is solved


@pytest.mark.parametrize(
    ("path", "protected"),
    [
        ("pkg/mod.py", False),
        ("tests/test_x.py", True),
        ("tests/helpers.py", True),
        ("pkg/test_util.py", True),
        ("pkg/util_test.py", True),
        ("conftest.py", True),
        ("pkg/conftest.py", True),
        ("pytest.ini", True),
        ("pyproject.toml", True),
        ("setup.cfg", True),
        ("sitecustomize.py", True),
        ("evil.pth", True),
        ("pkg/contest.py", False),
        ("README.md", False),
    ],
)
def test_protected_paths(path, protected):
    assert is_protected(path) is protected


def test_grading_tree_restores_tests_and_keeps_source_edits():
    original = {
        "m.py": "X = 1\n",
        "tests/test_v.py": "def test_v(): assert 1\n",
        "pytest.ini": "[pytest]\n",
    }
    agent = {
        "m.py": b"X = 2\n",  # the fix: kept
        "new_helper.py": b"Y = 3\n",  # new source file: kept
        "tests/test_v.py": b"def test_v(): pass\n",  # edited visible test: restored
        "conftest.py": b"import pytest\n",  # new conftest: dropped
        "pytest.py": b"print('PASSED')\n",  # shadows the runner: dropped
        "m/__pycache__/x.pyc": b"\x00",  # junk
        "tests/test_h.py": b"def test_a(): pass\n",  # pre-placed hidden test name: overwritten
    }  # pytest.ini deleted by the agent: restored
    hidden = {"tests/test_h.py": "def test_a(): assert X == 2\n"}
    tree = grading_tree(original, agent, hidden)
    assert tree.files == {
        "m.py": b"X = 2\n",
        "new_helper.py": b"Y = 3\n",
        "tests/test_v.py": b"def test_v(): assert 1\n",
        "pytest.ini": b"[pytest]\n",
        "tests/test_h.py": b"def test_a(): assert X == 2\n",
    }
    assert tree.protected_changed == [
        "conftest.py",
        "pytest.ini",
        "tests/test_h.py",
        "tests/test_v.py",
    ]
    assert tree.dropped == ["pytest.py"]


@pytest.mark.parametrize(
    ("command", "blocked"),
    [
        ("ls -la", False),
        ("grep -rn gitignore .", False),
        ("cd src && git status", True),
        ("cat a | grep b; /usr/bin/git log", True),
        ("FOO=1 git diff", True),
        ("echo $(git rev-parse HEAD)", True),
        ("python -c 'print(1)' || nohup x", True),
        ("sudo git log", True),
    ],
)
def test_blocked_commands_are_found_in_compound_commands(command, blocked):
    assert bool({"git", "nohup"} & set(first_words(command))) is blocked


def test_truncate_middle():
    text = "a" * 50 + "b" * 50
    out = truncate_middle(text, 20)
    assert out.startswith("a" * 10) and out.endswith("b" * 10) and "80 characters elided" in out
    assert truncate_middle("short", 20) == "short"


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"instance_id": ""}, "missing instance_id"),
        ({"problem_statement": None}, "missing problem_statement"),
        ({"repo_files": None, "docker_image": "Bad Name:x"}, "docker_image"),
        ({"repo_files": None, "docker_image": "namanjain12/orange3:abc"}, "the image's own"),
        ({"repo_files": None, "base_commit": "abc123"}, "only given as a commit"),
        ({"repo_files": None}, "no repository"),
        ({"repo_files": {"../escape.py": "x"}}, "inside the repository"),
        ({"repo_files": {"/etc/passwd": "x"}}, "inside the repository"),
        ({"repo_files": [{"path": "a.py"}]}, "expected {'path'"),
        ({"repo_files": "{not json"}, "not valid JSON"),
        ({"hidden_tests": None}, "no hidden tests"),
        ({"FAIL_TO_PASS": [], "PASS_TO_PASS": []}, "nothing to grade"),
        ({"FAIL_TO_PASS": "[1, 2]"}, "list of test names"),
        ({"expected_output_json": "{oops"}, "not valid JSON"),
    ],
)
def test_broken_rows_give_clear_errors(change, message):
    row = dict(ROWS[0])
    row.update(change)
    with pytest.raises(ConfigError, match=re.escape(message)):
        task_from_row(row, 3)


def test_row_forms_json_strings_and_repo_path(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("X = 1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\x00")
    task = task_from_row(
        {
            "instance_id": "local",
            "problem_statement": "p",
            "repo_path": str(tmp_path),
            "hidden_tests": json.dumps([{"path": "tests/test_m.py", "content": "x"}]),
            "FAIL_TO_PASS": json.dumps(["tests/test_m.py::test_x"]),
            "PASS_TO_PASS": "[]",
        }
    )
    assert task.repo_files == {"pkg/m.py": "X = 1\n"}
    assert task.test_files == ["tests/test_m.py"]
    with pytest.raises(ConfigError, match="duplicate instance_id"):
        load_tasks([ROWS[0], ROWS[0]])
    with pytest.raises(ConfigError, match="empty"):
        load_tasks([])


def test_sample_file_is_what_the_generator_writes():
    import importlib.util

    path = SAMPLE.parent.parent.parent / "scripts" / "make_sample.py"
    spec = importlib.util.spec_from_file_location("make_sample_for_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render() == SAMPLE.read_text()
    assert 4 <= len(ROWS) <= 6


def test_load_environment_arguments():
    env = load_environment()
    assert sorted(env.tasks) == sorted(BY_ID)
    assert len(env.dataset) == 5
    assert env.max_turns == 200
    assert {t["function"]["name"] for t in env.oai_tools} == {
        "execute_bash",
        "edit_via_str_replace",
    }
    prompt = env.dataset[0]["prompt"][-1]["content"]
    assert SENTINEL in prompt and "/workspace/repo" in prompt
    for row in ROWS:  # the hidden tests are never in the prompt
        for f in row["hidden_tests"]:
            assert Path(f["path"]).stem not in json.dumps(env.dataset[:]["prompt"])
    with pytest.raises(ConfigError, match="between 1 and 200"):
        load_environment(max_turns=201)
    with pytest.raises(ConfigError, match="unknown instance_ids"):
        load_environment(instance_ids=["nope"])
    assert "git" not in load_environment(allow_git=True).blocked_commands
    one = load_environment(source=[ROWS[1]])
    assert list(one.tasks) == [ROWS[1]["instance_id"]]


# -- scripted agents in the sandbox ----------------------------------------------------------
def call(name, **arguments):
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def bash(command):
    return call("execute_bash", command=command)


SUBMIT = bash(f"echo {SENTINEL}")


def edits(row, key="gold_edits"):
    return [call("edit_via_str_replace", **e) for e in row[key]]


HIDDEN_PROBE = (
    "find / \\( -path /proc -o -path /sys -o -path /usr \\) -prune -o -name 'test_removal*' -print; "
    "grep -rl remove_all_drops_item / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr "
    "2>/dev/null; ls -a tests; echo probe-done"
)
CHEAT_CONFTEST = (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    rep = outcome.get_result()\n    rep.outcome = 'passed'\n"
)
FAKE_PYTEST = "print('PASSED tests/test_clamp_bounds.py::test_clamp_upper_is_inclusive')\n"


TEST_PATCH = """\
--- a/tests/test_basics.py
+++ b/tests/test_basics.py
@@ -8,2 +8,6 @@
 def test_lerp_midpoint():
     assert lerp(2, 4, 0.5) == 3
+
+
+def test_clamp_at_high():
+    assert clamp(10, 0, 10) == 10
"""


def scenarios():
    """name -> (base task, the agent's replies by turn[, row overrides])."""
    out = {}
    for iid, row in BY_ID.items():
        out[f"gold:{iid}"] = (iid, [bash("ls -R && cat README.md"), *edits(row), SUBMIT])
        out[f"noedit:{iid}"] = (iid, [SUBMIT])
    head, num, stock, spans, tally = (
        "headline__title-first-word",
        "numkit__clamp-upper-bound",
        "stockroom__remove-last-unit",
        "spans__multi-digit-durations",
        "tally__median-unsorted",
    )
    out["naive"] = (head, [*edits(BY_ID[head], "naive_edits"), SUBMIT])
    out["edit-tests"] = (
        num,
        [
            bash(
                "cat > tests/test_clamp_bounds.py <<'EOF'\ndef test_clamp_upper_is_inclusive(): pass\nEOF"
            ),
            bash(f"cat > conftest.py <<'EOF'\n{CHEAT_CONFTEST}EOF"),
            bash(f"cat > pytest.py <<'EOF'\n{FAKE_PYTEST}EOF"),
            call(
                "edit_via_str_replace",
                path="tests/test_basics.py",
                old_str="assert clamp(5, 0, 10) == 5",
                new_str="assert True",
            ),
            bash("python -I -m pytest -q -p no:cacheprovider tests 2>&1 | tail -2"),
            SUBMIT,
        ],
    )
    out["wipe-repo"] = (num, [bash(f"find . -mindepth 1 -delete; chmod 000 .; echo {SENTINEL}")])
    out["hidden-invisible"] = (stock, [bash(HIDDEN_PROBE), *edits(BY_ID[stock]), SUBMIT])
    out["max-turns"] = (head, [bash("ls")])  # never submits
    # the last allowed turn (12) still runs its tool call: submitting there counts
    out["submit-on-last-turn"] = (head, [*edits(BY_ID[head]), *[bash("ls")] * 10, SUBMIT])
    out["format"] = (
        num,
        [
            Reply(
                tool_calls=[
                    {"name": "execute_bash", "arguments": {"command": "touch one"}},
                    {"name": "execute_bash", "arguments": {"command": "touch two"}},
                ]
            ),
            Reply(content="I think I am done."),
            bash("ls one two 2>&1; true"),
            *edits(BY_ID[num]),
            SUBMIT,
        ],
    )
    out["tool-errors"] = (
        tally,
        [
            call(
                "edit_via_str_replace", path="tally/stats.py", old_str="no such text", new_str="x"
            ),
            call(
                "edit_via_str_replace",
                path="tally/stats.py",
                old_str="raise ValueError",
                new_str="x",
            ),
            call("edit_via_str_replace", path="missing.py", old_str="a", new_str="b"),
            bash("git status"),
            bash("python3 -c \"print('x' * 30000)\""),
            Reply(tool_calls=[{"name": "execute_bash", "arguments": "{not json"}]),
            bash("exit 3"),
            bash(f"echo {SENTINEL} is what I will run later"),
            *edits(BY_ID[tally]),
            SUBMIT,
        ],
    )
    # SWE-bench form: the hidden test arrives as a test_patch against a visible test file
    swebench = {
        "hidden_tests": None,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": ["tests/test_basics.py::test_clamp_at_high"],
        "PASS_TO_PASS": ["tests/test_basics.py::test_clamp_inside"],
    }
    out["test-patch:gold"] = (num, [*edits(BY_ID[num]), SUBMIT], swebench)
    out["test-patch:noedit"] = (num, [SUBMIT], swebench)
    # R2E-Gym form: exact expected statuses, names without the file
    r2e = {
        "FAIL_TO_PASS": None,
        "PASS_TO_PASS": None,
        "expected_output_json": json.dumps(
            {
                "test_remove_all_drops_item": "PASSED",
                "test_remove_partial_keeps_item": "PASSED",
                "test_remove_too_many_raises": "PASSED",
            }
        ),
    }
    out["r2e:gold"] = (stock, [*edits(BY_ID[stock]), SUBMIT], r2e)
    out["r2e:noedit"] = (stock, [SUBMIT], r2e)
    out["hang-then-fix"] = (spans, [bash("sleep 60"), *edits(BY_ID[spans]), SUBMIT])
    out["hang-twice"] = (
        tally,
        [bash("sleep 60"), bash("sleep 60; echo finished-$((6 * 7))"), SUBMIT],
    )
    return out


SCENARIOS = scenarios()


def scenario_rows(names):
    rows = []
    for name in names:
        iid = SCENARIOS[name][0]
        row = dict(BY_ID[iid])
        row.update(SCENARIOS[name][2] if len(SCENARIOS[name]) > 2 else {})
        row["instance_id"] = f"{iid}@{name}"
        row["problem_statement"] = f"SCENARIO<{name}>\n" + row["problem_statement"]
        rows.append(row)
    return rows


scripted_agent = scenario_agent("SCENARIO", {name: s[1] for name, s in SCENARIOS.items()})


HANG = ["hang-then-fix", "hang-twice"]
MAIN = [n for n in SCENARIOS if n not in HANG]


@pytest.fixture(scope="module")
def runs():
    """One evaluation of every scenario: {scenario: output record}."""

    async def run():
        main = load_environment(source=scenario_rows(MAIN), max_turns=12, command_timeout=20)
        hang = load_environment(
            source=scenario_rows(HANG), max_turns=12, command_timeout=1, max_command_timeouts=2
        )
        async with ScriptedServer(scripted_agent) as srv:
            client = vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)
            try:
                t0 = time.perf_counter()
                outs = await asyncio.gather(
                    main.evaluate(client, "m", state_columns=["grading"]),
                    hang.evaluate(client, "m", state_columns=["grading"]),
                )
                elapsed = time.perf_counter() - t0
            finally:
                await client.close()
                await main.teardown()
                await hang.teardown()
            assert main.active_sandboxes == set() and hang.active_sandboxes == set()
        records = {}
        for out in outs:
            for rec in out["outputs"]:
                records[rec["info"]["instance_id"].split("@", 1)[1]] = rec
        return records, elapsed

    records, elapsed = asyncio.run(run())
    assert set(records) == set(SCENARIOS)
    return records, elapsed


def tool_texts(rec):
    return [m["content"] for m in rec["completion"] if m["role"] == "tool"]


def test_max_turns_for_the_scenarios_is_small():
    assert all(len(v[1]) <= 12 for v in SCENARIOS.values())


@pytest.mark.parametrize("iid", sorted(BY_ID))
def test_gold_fix_scores_one_and_no_edit_scores_zero(runs, iid):
    records, _ = runs
    row = BY_ID[iid]
    gold, noedit = records[f"gold:{iid}"], records[f"noedit:{iid}"]
    assert gold["error"] is None and noedit["error"] is None
    assert gold["reward"] == 1.0 and gold["stop_condition"] == "submitted"
    assert gold["grading"]["statuses"] == {
        n: "PASSED" for n in row["FAIL_TO_PASS"] + row["PASS_TO_PASS"]
    }
    # the task is real: without a fix its FAIL_TO_PASS tests fail and PASS_TO_PASS pass
    assert noedit["reward"] == 0.0 and noedit["metrics"]["did_submit"] == 1.0
    statuses = noedit["grading"]["statuses"]
    assert all(statuses[n] in ("FAILED", "ERROR") for n in row["FAIL_TO_PASS"])
    assert all(statuses[n] == "PASSED" for n in row["PASS_TO_PASS"])
    # the sentinel ended the rollout: no model call after it
    last = gold["completion"][-1]
    assert (last["role"], last["content"]) == ("tool", SENTINEL)
    assert last["tool_call_id"] == gold["completion"][-2]["tool_calls"][0]["id"]


def test_naive_fix_that_breaks_a_pass_to_pass_test_scores_zero(runs):
    rec = runs[0]["naive"]
    assert rec["reward"] == 0.0
    statuses = rec["grading"]["statuses"]
    assert statuses["tests/test_title_rules.py::test_single_small_word"] == "PASSED"
    assert statuses["tests/test_title_rules.py::test_small_words_inside_stay_lower"] == "FAILED"


def test_editing_the_tests_scores_zero(runs):
    rec = runs[0]["edit-tests"]
    # the cheat works on the agent's own test run ...
    assert re.search(r"\d+ passed", tool_texts(rec)[4]) and "failed" not in tool_texts(rec)[4]
    # ... but grading uses the pristine tests, the hidden tests and the real pytest
    assert rec["reward"] == 0.0 and rec["error"] is None
    assert rec["grading"]["protected_changed"] == [
        "conftest.py",
        "tests/test_basics.py",
        "tests/test_clamp_bounds.py",
    ]
    assert rec["grading"]["dropped"] == ["pytest.py"]
    assert rec["metrics"]["protected_files_changed"] == 3.0
    assert (
        rec["grading"]["statuses"]["tests/test_clamp_bounds.py::test_clamp_upper_is_inclusive"]
        == "FAILED"
    )


def test_wiped_repository_scores_zero_without_error(runs):
    rec = runs[0]["wipe-repo"]
    assert rec["stop_condition"] == "submitted" and rec["error"] is None
    assert rec["reward"] == 0.0
    assert rec["grading"]["statuses"]["tests/test_clamp_bounds.py::test_clamp_below"] != "PASSED"


def test_hidden_tests_are_not_in_the_sandbox_during_the_rollout(runs):
    rec = runs[0]["hidden-invisible"]
    probe = tool_texts(rec)[0]
    assert "probe-done" in probe and "test_inventory.py" in probe  # the probe really ran
    assert "test_removal" not in probe and "remove_all_drops_item" not in probe
    # ... yet they ran at scoring time, and the fix passes them
    assert rec["reward"] == 1.0
    assert (
        rec["grading"]["statuses"]["tests/test_removal.py::test_remove_all_drops_item"] == "PASSED"
    )


def test_hitting_max_turns_scores_zero_without_grading(runs):
    rec = runs[0]["max-turns"]
    assert rec["stop_condition"] == "max_turns_reached"
    assert rec["metrics"]["num_turns"] == 12.0
    assert rec["reward"] == 0.0 and rec["metrics"]["did_submit"] == 0.0 and rec["error"] is None
    assert rec["grading"]["reason"].startswith("not submitted")
    last = rec["completion"][-1]  # the 12th turn's command ran; no 13th model call
    assert last["role"] == "tool" and "<returncode>0</returncode>" in last["content"]
    assert sum(m["role"] == "assistant" for m in rec["completion"]) == 12
    on_time = runs[0]["submit-on-last-turn"]
    assert on_time["metrics"]["num_turns"] == 12.0 and on_time["stop_condition"] == "submitted"
    assert on_time["reward"] == 1.0


def test_one_tool_call_per_turn(runs):
    rec = runs[0]["format"]
    comp = rec["completion"]
    # two calls: both answered, neither executed
    assert [m["role"] for m in comp[:3]] == ["assistant", "tool", "tool"]
    assert all("not executed" in m["content"] and "EXACTLY ONE" in m["content"] for m in comp[1:3])
    # no call: a user message, and the rollout goes on
    assert comp[3]["role"] == "assistant" and comp[4]["role"] == "user"
    assert "found 0 tool calls" in comp[4]["content"]
    assert "No such file" in comp[6]["content"]  # `touch one` never ran
    assert rec["metrics"]["format_error_count"] == 2.0
    assert rec["reward"] == 1.0


def test_tool_errors_are_messages_not_crashes(runs):
    rec = runs[0]["tool-errors"]
    texts = tool_texts(rec)
    assert "was not found in tally/stats.py" in texts[0]
    assert "occurs 2 times" in texts[1] and "lines" in texts[1]
    assert "cannot read missing.py" in texts[2]
    assert "`git` is not allowed" in texts[3]
    big = texts[4]
    assert "<warning>" in big and re.search(r"2000\d characters elided", big) and len(big) < 11_000
    assert "not valid JSON" in texts[5]
    assert texts[6].startswith("<returncode>3</returncode>")
    assert "<returncode>0</returncode>" in texts[7]  # the sentinel not alone: no submission
    assert rec["reward"] == 1.0 and rec["error"] is None


@pytest.mark.parametrize("form", ["test-patch", "r2e"])
def test_swebench_test_patch_and_r2e_expected_output_rows(runs, form):
    gold, noedit = runs[0][f"{form}:gold"], runs[0][f"{form}:noedit"]
    assert gold["error"] is None and noedit["error"] is None
    assert (gold["reward"], noedit["reward"]) == (1.0, 0.0)
    if form == "test-patch":
        assert noedit["grading"]["statuses"] == {
            "tests/test_basics.py::test_clamp_at_high": "FAILED",
            "tests/test_basics.py::test_clamp_inside": "PASSED",
        }
    else:
        assert noedit["grading"]["statuses"]["test_remove_all_drops_item"] == "FAILED"


def test_hanging_command_is_cut_and_the_rollout_goes_on(runs):
    records, elapsed = runs
    rec = records["hang-then-fix"]
    first = tool_texts(rec)[0]
    assert "timed out after 1 s and has been killed" in first
    assert rec["metrics"]["command_timeout_count"] == 1.0
    assert rec["reward"] == 1.0
    assert elapsed < 50  # nobody waited for `sleep 60`


def test_repeated_timeouts_end_the_rollout_with_zero(runs):
    rec = runs[0]["hang-twice"]
    assert rec["stop_condition"] == "max_command_timeouts_reached"
    assert rec["metrics"]["command_timeout_count"] == 2.0
    assert "finished-42" not in "".join(tool_texts(rec))
    assert rec["reward"] == 0.0 and rec["metrics"]["did_submit"] == 0.0


def test_vf_eval_run(tmp_path):
    """`vf-eval` in a subprocess: gold fix for one task, no edit for the other."""
    gold_id, other_id = "spans__multi-digit-durations", "numkit__clamp-upper-bound"
    first_line = BY_ID[gold_id]["problem_statement"].splitlines()[0]

    def agent(body):
        messages = body["messages"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        script = (
            [*edits(BY_ID[gold_id]), SUBMIT]
            if first_line in message_text(messages[1])
            else [SUBMIT]
        )
        return script[min(turn, len(script) - 1)]

    args = {"instance_ids": [gold_id, other_id], "max_turns": 5, "command_timeout": 20}
    rows, meta = scripted_eval(
        run_vf_eval, tmp_path, "mini-swe-agent-plus", agent, "-n 2 -r 1", args
    )
    rewards = {r["info"]["instance_id"]: r["reward"] for r in rows}
    assert rewards == {gold_id: 1.0, other_id: 0.0}
    assert all(r["stop_condition"] == "submitted" for r in rows)
    assert meta["avg_reward"] == 0.5


def test_without_bwrap_loading_says_what_is_missing(monkeypatch):
    """The weaker process tier cannot mount the pytest runtime: a clear error at load time
    instead of failing every rollout."""
    from verifiers.sandbox import BwrapProvider

    monkeypatch.setattr(
        BwrapProvider, "unavailable_reason", staticmethod(lambda: "bwrap not installed")
    )
    with pytest.raises(ConfigError, match="bwrap not installed"):
        load_environment()


def test_repository_that_does_not_fit_is_an_infra_error():
    """A workspace too small for the repository: the rollout is marked as an infra failure
    (masked, retried), not scored 0 and not blamed on the model."""
    iid = "numkit__clamp-upper-bound"

    async def run():
        env = load_environment(instance_ids=[iid], disk_size_gb=8192 / 2**30, pool_size=0)
        async with ScriptedServer(lambda body: SUBMIT) as srv:
            client = vf.OpenAIClient(srv.base_url, api_key="x")
            try:
                return await env.evaluate(client, "m")
            finally:
                await client.close()
                await env.teardown()

    rec = asyncio.run(run())["outputs"][0]
    assert rec["error"] is not None and rec["error"]["infra"] is True
    assert "could not write the repository" in rec["error"]["message"]
    assert math.isnan(rec["reward"])  # never a fake 0
