"""i3-code: the INTELLECT-3 code environment.

The model writes a Python program for a competitive-programming task; the last fenced code block
of its answer (after any finished reasoning) runs against the problem's tests in a local sandbox
(`vf.CodeEnv`: one fresh bubblewrap sandbox per rollout, one command per test with its own
timeout). Reward: `passed` = 1.0 when every selected test passes, else 0.0 (no partial credit);
`pass_rate` and `num_test_cases` are logged as metrics. A rollout whose sandbox kept failing is an
infra error (masked, reward NaN), never a 0.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers import INT_LITERAL, Comparison, content_text, extract_code, parse_number
from verifiers.sandbox import MiB, RuntimeSpec, SandboxSpec

__all__ = [
    "BASE_IMPORTS",
    "DEFAULT_INSTRUCTION",
    "I3CodeEnv",
    "load_environment",
    "outputs_equivalent",
    "prelude_for",
    "select_tests",
    "strip_reasoning",
]

logger = logging.getLogger("i3_code")

DATASET = "PrimeIntellect/INTELLECT-3-RL"
DIFFICULTY_KEY = "avg@8_qwen3_4b_instruct_2507"
SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"
DEFAULT_INSTRUCTION = "Solve the programming task below in a Python markdown code block."

# Run before every program so solutions may omit the usual imports (standard library only: the
# sandbox runs the host's plain python3 unless `runtime_packages` adds more). Only the names a
# program mentions are imported (a word match on its source): the same effect as importing all
# of them, at half the per-test cost (interpreter start-up is most of a test; `typing` and `re`
# alone add as much again).
PRELUDE_MODULES = (
    "sys", "os", "io", "math", "re", "string", "itertools", "collections", "heapq", "bisect",
    "functools", "operator",
)  # fmt: skip
PRELUDE_NAMES = {
    "collections": ("defaultdict", "Counter", "deque", "OrderedDict"),
    "functools": ("lru_cache", "reduce", "cmp_to_key"),
    "itertools": ("accumulate", "combinations", "permutations", "product", "groupby", "chain"),
    "heapq": ("heappush", "heappop", "heapify"),
    "bisect": ("bisect_left", "bisect_right", "insort"),
    "typing": ("List", "Dict", "Tuple", "Set", "Optional"),
}
BASE_IMPORTS = "\n".join(
    [f"import {', '.join(PRELUDE_MODULES)}"]
    + [f"from {m} import {', '.join(names)}" for m, names in PRELUDE_NAMES.items()]
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def prelude_for(code: str) -> str:
    """The lines of BASE_IMPORTS that bind a name `code` mentions."""
    words = set(_WORD.findall(code))
    lines = []
    modules = [m for m in PRELUDE_MODULES if m in words]
    if modules:
        lines.append(f"import {', '.join(modules)}")
    for module, names in PRELUDE_NAMES.items():
        used = [n for n in names if n in words]
        if used:
            lines.append(f"from {module} import {', '.join(used)}")
    return "\n".join(lines)


# -- parsing the answer -----------------------------------------------------------------------
# The answer part of a completion: after the last `</think>`, "" while reasoning is unfinished.
strip_reasoning = vf.strip_reasoning


# -- comparing output -------------------------------------------------------------------------
def _token_matches(actual: str, expected: str, tol: Decimal, int_accepts_float: bool) -> bool:
    da, de = parse_number(actual), parse_number(expected)
    if da is None or de is None:
        return False
    if INT_LITERAL.fullmatch(expected) and not int_accepts_float:
        return INT_LITERAL.fullmatch(actual) is not None and da == de  # integers exactly
    with localcontext() as ctx:
        ctx.prec = 60
        return abs(da - de) <= tol


def outputs_equivalent(
    actual: str, expected: str, abs_tol: float = 1e-3, int_accepts_float: bool = False
) -> bool:
    """i3-code's stdout comparison, first success wins: trimmed equality; line-wise (lines
    stripped, blank lines dropped); token-wise (whitespace-split per line); numeric (same token
    layout, every differing pair of tokens are numbers: an expected integer exactly, an
    expected decimal within `abs_tol`)."""
    if actual.strip() == expected.strip():
        return True
    a_lines = [line.strip() for line in actual.splitlines() if line.strip()]
    e_lines = [line.strip() for line in expected.splitlines() if line.strip()]
    if a_lines == e_lines:
        return True
    a_tok = [line.split() for line in a_lines]
    e_tok = [line.split() for line in e_lines]
    if a_tok == e_tok:
        return True
    if len(a_tok) != len(e_tok) or any(len(x) != len(y) for x, y in zip(a_tok, e_tok, strict=True)):
        return False
    tol = Decimal(str(abs_tol))
    for x_line, y_line in zip(a_tok, e_tok, strict=True):
        for x, y in zip(x_line, y_line, strict=True):
            if x != y and not _token_matches(x, y, tol, int_accepts_float):
                return False
    return True


# -- dataset ----------------------------------------------------------------------------------
def select_tests(n: int, k: int | None, seed: int, key: str) -> list[int]:
    """Indices (ascending) of at most `k` of `n` tests, chosen by hashing (seed, key, index):
    the same on every machine and Python version, and independent of dataset order."""
    if k is None or k <= 0 or n <= k:
        return list(range(n))
    rank = sorted(
        range(n),
        key=lambda i: hashlib.sha256(f"{seed}\0{key}\0{i}".encode()).digest(),
    )
    return sorted(rank[:k])


def _load_json(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as e:
            raise vf.ConfigError(f"{what} is not valid JSON: {e}") from None
    return value


def process_row(
    row: dict[str, Any],
    index: int,
    max_num_tests: int | None,
    seed: int,
    timeout: float,
    instruction: str = DEFAULT_INSTRUCTION,
) -> dict[str, Any]:
    """One INTELLECT-3-RL `code` row -> (prompt text, info with the selected tests)."""
    where = f"row {index}"
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise vf.ConfigError(f"{where}: 'question' must be a non-empty string")
    info = _load_json(row.get("info"), f"{where}: 'info'")
    if not isinstance(info, dict) or "tests" not in info:
        raise vf.ConfigError(f"{where}: 'info' must be an object with a 'tests' field")
    tests = _load_json(info["tests"], f"{where}: info['tests']")
    if not isinstance(tests, dict):
        raise vf.ConfigError(f"{where}: info['tests'] must be an object with inputs/outputs")
    inputs, outputs = tests.get("inputs"), tests.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise vf.ConfigError(f"{where}: info['tests'] needs 'inputs' and 'outputs' lists")
    if len(inputs) != len(outputs):
        raise vf.ConfigError(
            f"{where}: {len(inputs)} test inputs but {len(outputs)} outputs in info['tests']"
        )
    if not inputs:
        raise vf.ConfigError(f"{where}: info['tests'] has no test cases")
    fn_name = tests.get("fn_name") or None
    if fn_name is not None and not isinstance(fn_name, str):
        raise vf.ConfigError(f"{where}: info['tests']['fn_name'] must be a string or null")
    chosen = select_tests(len(inputs), max_num_tests, seed, question)
    selected = {
        "inputs": [inputs[i] for i in chosen],
        "outputs": [outputs[i] for i in chosen],
        "fn_name": fn_name,
    }
    return {
        "question": f"{instruction}\n\n{question}" if instruction else question,
        "answer": "",
        "task": "i3-code",
        "info": {
            "tests": json.dumps(selected),
            "num_test_cases": len(chosen),
            "fn_name": fn_name or "",
            "source": str(info.get("source") or ""),
            "subset": "i3-code",
            "subset_idx": index,
            "timeout": timeout,
            # a problem that accepts floats for integers says so here (JSON, see CodeEnv)
            "comparison": json.dumps(info.get("comparison") or {}),
        },
    }


# -- the environment --------------------------------------------------------------------------
class I3CodeEnv(vf.CodeEnv):
    """CodeEnv with i3-code's answer parsing, import prelude and output comparison."""

    def __init__(self, output_abs_tol: float = 1e-3, **kwargs: Any) -> None:
        if not output_abs_tol >= 0:
            raise vf.ConfigError(f"output_abs_tol must be >= 0, got {output_abs_tol!r}")
        self.output_abs_tol = output_abs_tol
        super().__init__(**kwargs)

    def get_code(self, completion: Any) -> str | None:
        for message in reversed(completion or []):
            if isinstance(message, dict) and message.get("role") == "assistant":
                code = extract_code(strip_reasoning(content_text(message)), languages=())
                return code if code and code.strip() else None
        return None

    def prepare_code(self, code: str, state: Any) -> str:
        return vf.with_prelude(code, prelude_for)

    def compare_stdout(self, actual: str, expected: str, cmp: Comparison | None = None) -> bool:
        cmp = cmp or self.comparison
        return outputs_equivalent(actual, expected, self.output_abs_tol, cmp.int_accepts_float)


def num_test_cases(info: dict[str, Any]) -> float:
    """How many tests this problem is graded on (after subsampling)."""
    return float(info.get("num_test_cases") or 0)


def load_environment(
    source: Any = "auto",
    dataset_name: str = DATASET,
    dataset_subset: str = "code",
    dataset_split: str = "train",
    dataset_shuffle: bool = False,
    dataset_num_proc: int = 1,
    difficulty_key: str | None = DIFFICULTY_KEY,
    min_solve_rate: float = 0.0,
    max_solve_rate: float = 1.0,
    keep_unrated: bool = False,
    skip_first: int = 0,
    num_examples: int = -1,
    max_num_tests: int | None = 15,
    seed: int = 42,
    timeout_per_test: float = 10.0,
    stop_after_timeout: bool = True,
    instruction_prompt: str = DEFAULT_INSTRUCTION,
    system_prompt: str | None = None,
    output_abs_tol: float = 1e-3,
    float_tol: float = 1e-6,
    int_accepts_float: bool = False,
    pass_rate_weight: float = 0.0,
    sandbox_retries: int = 2,
    docker_image: str | None = None,
    pool_size: int = 10,
    timeout_minutes: float = 360.0,
    memory_mb: int = 1024,
    runtime_packages: list[str] | tuple[str, ...] = (),
    provider: Any = None,
) -> vf.Environment:
    """Build the i3-code environment.

    Args:
        source: "auto" (the hub dataset when reachable, else the bundled sample), "hub",
            "sample", a local .jsonl/.parquet path or save_to_disk folder, or a list of rows.
        dataset_name / dataset_subset / dataset_split: the hub dataset, config and split.
        dataset_shuffle: shuffle the rows (after filtering and processing) with ``seed``.
        dataset_num_proc: processes that decode and check the rows (1: this process).
        difficulty_key: column with the proxy model's solve rate (None: no filter).
        min_solve_rate / max_solve_rate: keep rows with min <= rate <= max (inclusive).
        keep_unrated: with a narrower range, keep rows whose rate is empty (default: drop).
        skip_first: drop this many rows first (before filtering), as the original did.
        num_examples: keep at most this many rows after filtering (-1: all).
        max_num_tests: grade on at most this many tests per problem, chosen deterministically
            from (seed, question text) (None or 0: all tests).
        seed: seed of the test subsample and of ``dataset_shuffle``.
        timeout_per_test: wall-clock seconds per test (really applied; the whole process tree
            is killed at the deadline).
        stop_after_timeout: once a test times out, fail the remaining tests without running
            them (the reward is all-or-nothing anyway; bounds a looping program's cost).
        instruction_prompt: the line placed before each question.
        system_prompt: optional system message.
        output_abs_tol: absolute tolerance of non-integer numeric stdout tokens (an expected
            integer token is matched exactly).
        float_tol: relative and absolute tolerance of float return values (function-call
            tests); integer return values are compared exactly.
        int_accepts_float: accept a float (within the tolerance) where an integer is expected,
            for every problem (a problem may say so itself in `info["comparison"]`).
        pass_rate_weight: weight of the fraction of tests passed (0: a metric only).
        sandbox_retries: replacements of a failing sandbox before the rollout is an infra error.
        docker_image: the image tests run in, for a provider that runs images (its
            ``supports_images``); None: ``I3_CODE_DOCKER_IMAGE`` on such a provider, else the
            local runtime (``runtime_packages``). An image on a local provider is an error.
        pool_size: warm sandboxes kept ready.
        timeout_minutes: lifetime of one sandbox (the provider kills it after this long).
        memory_mb: memory limit of one sandbox (the cgroup counts the tmpfs workspace too).
        runtime_packages: extra PyPI packages for the sandbox's Python (e.g. ["numpy"]),
            installed once into a cached read-only runtime, never per rollout.
        provider: a `verifiers.sandbox` provider (default: bwrap, else the process tier).
    """
    arguments = dict(locals())  # source and dataset_* name the rows (vf.dataset_from_arguments)
    ds = vf.dataset_from_arguments(arguments, sample=SAMPLE, required_columns=["question", "info"])
    if skip_first > 0:
        ds = ds.select(range(min(skip_first, len(ds)), len(ds)))
    pass_rate = vf.PassRateFilter(
        difficulty_key,
        min_solve_rate,
        max_solve_rate,
        keep_unrated,
        param_names=("min_solve_rate", "max_solve_rate"),
    )
    ds = pass_rate.apply(ds, what="the i3-code dataset")
    if num_examples is not None and num_examples >= 0:
        ds = ds.select(range(min(num_examples, len(ds))))
    if len(ds) == 0:
        raise vf.ConfigError("no i3-code rows left after skip_first and the difficulty filter")
    if dataset_num_proc < 1:
        raise vf.ConfigError(f"dataset_num_proc must be at least 1, got {dataset_num_proc}")
    if timeout_minutes <= 0:
        raise vf.ConfigError(f"timeout_minutes must be positive, got {timeout_minutes}")
    image = _sandbox_image(docker_image, provider)
    rows = _process_rows(
        list(ds.select_columns(["question", "info"])),
        dataset_num_proc,
        functools.partial(
            process_row,
            max_num_tests=max_num_tests,
            seed=seed,
            timeout=timeout_per_test,
            instruction=instruction_prompt,
        ),
    )
    from datasets import Dataset

    dataset = Dataset.from_list(rows)
    if dataset_shuffle:
        dataset = dataset.shuffle(seed=seed)
    spec = SandboxSpec(
        runtime=RuntimeSpec(packages=tuple(runtime_packages)),
        image=image,
        cpu=1.0,
        memory=memory_mb * MiB,
        pids=64,
        disk=64 * MiB,
        lifetime=timeout_minutes * 60,
    )
    return I3CodeEnv(
        dataset=dataset,
        system_prompt=system_prompt,
        output_abs_tol=output_abs_tol,
        comparison=Comparison(
            float_rel_tol=float_tol, float_abs_tol=float_tol, int_accepts_float=int_accepts_float
        ),
        timeout_per_test=timeout_per_test,
        stop_after_timeout=stop_after_timeout,
        sandbox_retries=sandbox_retries,
        pass_rate_weight=pass_rate_weight,
        provider=provider,
        spec=spec,
        pool_size=pool_size,
        rubric=vf.Rubric(funcs=[num_test_cases], weights=[0.0]),
    )


def _process_rows(rows: list[dict[str, Any]], num_proc: int, fn: Any) -> list[dict[str, Any]]:
    """`fn(row, index)` over the rows, in ``num_proc`` worker processes when more than one."""
    if num_proc == 1 or len(rows) < 2:
        return [fn(row, i) for i, row in enumerate(rows)]
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, len(rows) // (num_proc * 4))
    with ProcessPoolExecutor(num_proc) as pool:
        return list(pool.map(fn, rows, range(len(rows)), chunksize=chunk))


def _sandbox_image(docker_image: str | None, provider: Any) -> str | None:
    """The image for the sandbox spec: only a provider that runs images gets one."""
    runs_images = bool(getattr(provider, "supports_images", False))
    if docker_image is None:
        return os.environ.get("I3_CODE_DOCKER_IMAGE") if runs_images else None
    if not runs_images:
        raise vf.ConfigError(
            f"docker_image={docker_image!r} needs a provider that runs images "
            "(supports_images); the local sandbox runs the local Python runtime, extended "
            "with runtime_packages (upstream's default image adds numpy and pandas)"
        )
    return docker_image
