"""No grading warm-up (issue 30 item 2): what a grading process and `import verifiers` load.

A run's first math score waits for the grading forkserver's start; that start is what the
forkserver imports. Its workers unpickle their calls from `verifiers.utils.math_grading`,
which pulls in math-verify and the exact layer, and the ``verifiers`` package resolves its
names lazily (PEP 562), so neither the forkserver nor a worker imports the SDK or openai.
Each check runs in a fresh interpreter: a forkserver is one per process and keeps whatever
the first pool of the test session preloaded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import verifiers as vf

# What grading needs of the SDK: the package itself (lazy), the pool and its fork server,
# the error classes, the grading entry point with its warm-up, and the exact layer.
GRADING_MODULES = {
    "verifiers",
    "verifiers.errors",
    "verifiers.utils",
    "verifiers.utils.answer_reading",
    "verifiers.utils.exact_answers",
    "verifiers.utils.fork_server",
    "verifiers.utils.math_grading",
    "verifiers.utils.math_warm",
    "verifiers.utils.pool_errors",
    "verifiers.utils.pool_workers",
    "verifiers.utils.process_pool",
}

# `-c`: no main script, which multiprocessing's forkserver would import too (see the README).
WORKER_MODULES = r"""
import asyncio, json
from verifiers.rubrics.math_rubric import MathRubric

async def main():
    rubric = MathRubric(max_workers=1)
    prompt = [{"role": "user", "content": "Solve it."}]
    state = {"prompt": prompt, "completion": [{"role": "assistant", "content": "\\boxed{1/2}"}],
             "answer": "0.5", "info": {}, "task": None, "example_id": 0, "metrics": {},
             "error": None, "input": {"prompt": prompt, "answer": "0.5", "example_id": 0}}
    await rubric.score_rollout(state)
    # eval is a builtin, so unpickling this call imports nothing more in the worker
    modules = await rubric.pool.run(eval, "sorted(__import__('sys').modules)", timeout=60)
    await rubric.teardown()
    print(json.dumps({"reward": state["reward"], "modules": modules}))

asyncio.run(main())
"""


def run_fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def sdk_modules(modules: list[str]) -> set[str]:
    return {m for m in modules if m == "verifiers" or m.startswith("verifiers.")}


def test_a_grading_worker_imports_math_verify_not_the_sdk():
    """The worker that graded a rollout (forked from the grading forkserver) holds
    math-verify and the grading modules only: no environment, rubric or client module of
    the SDK, and none of openai (what made the forkserver's start ~2 s)."""
    got = run_fresh(WORKER_MODULES)
    assert got["reward"] == 1.0
    modules = got["modules"]
    assert "math_verify" in modules
    assert sdk_modules(modules) == GRADING_MODULES
    assert not [m for m in modules if m == "openai" or m.startswith("openai.")]


def test_import_verifiers_imports_none_of_the_sdk():
    """`import verifiers` binds no submodule and imports neither openai nor the SDK's
    modules; `dir()` still lists every public name and the subpackages."""
    got = run_fresh(
        "import json, sys, verifiers as vf\n"
        "print(json.dumps({'modules': sorted(sys.modules), 'dir': dir(vf)}))"
    )
    assert sdk_modules(got["modules"]) == {"verifiers"}
    assert "openai" not in got["modules"]
    assert set(vf.__all__) <= set(got["dir"])
    assert {"rubrics", "envs", "utils", "errors"} <= set(got["dir"])


def test_names_resolve_on_first_use_and_submodule_paths_still_reach_deep_modules():
    """``vf.Name`` imports only its defining module; reaching a subpackage as an attribute
    (classic ``vf.rubrics.math_rubric.X``, ``vf.utils.data_utils``) works as when the
    package imported everything; an unknown name is an AttributeError."""
    got = run_fresh(
        "import json, sys, verifiers as vf\n"
        "error = vf.InfraError\n"
        "only_errors = sorted(m for m in sys.modules if m.startswith('verifiers.'))\n"
        "deep = vf.rubrics.math_rubric.MathRubric is vf.MathRubric\n"
        "data = callable(vf.utils.data_utils.load_example_dataset)\n"
        "try:\n"
        "    vf.NoSuchName\n"
        "    missing = 'resolved'\n"
        "except AttributeError as e:\n"
        "    missing = str(e)\n"
        "from verifiers import ChatCompletion\n"
        "print(json.dumps({'only_errors': only_errors, 'deep': deep, 'data': data,\n"
        "                  'missing': missing, 'error': error.__module__,\n"
        "                  'chat': ChatCompletion.__module__}))"
    )
    assert got["only_errors"] == ["verifiers.errors"]
    assert got["error"] == "verifiers.errors"
    assert got["deep"] is True and got["data"] is True
    assert got["missing"] == "module 'verifiers' has no attribute 'NoSuchName'"
    assert got["chat"].startswith("openai.types.chat")


def test_lazy_sources_match_what_type_checkers_read():
    """The runtime map of names to modules (`_SOURCES`) says what the ``TYPE_CHECKING``
    imports say, name for name, and covers ``__all__`` (less ``__version__``)."""
    tree = ast.parse(Path(vf.__file__).read_text())
    (block,) = [
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
    ]
    imported = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == vf._SOURCE_OF
    assert set(imported) == set(vf.__all__) - {"__version__"}
