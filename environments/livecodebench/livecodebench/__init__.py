"""LiveCodeBench (code generation) on `vf.CodeEnv`.

Problems from `livecodebench/code_generation_lite`: stdin/stdout problems (AtCoder, Codeforces)
and LeetCode-style functional problems with starter code. The last ```python block of the answer
runs against the public and private tests in a local sandbox; reward `passed` = 1.0 when every
test passes (pass@1 is its mean), else 0.0. Private tests are decoded from the benchmark's
compressed form (base64 -> zlib -> pickle -> JSON) with an unpickler that cannot build any object
but strings, numbers, lists, tuples and dicts (see `decode_private_tests`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import importlib
import io
import json
import logging
import pickle
import re
import zlib
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers import FENCE, Comparison, content_text, hub_reachable, values_equal
from verifiers.sandbox import MiB, SandboxSpec

from . import prompts
from .prompts import OFFICIAL_PROMPTS, SYSTEM_PROMPT, build_prompt

__all__ = [
    "OFFICIAL_PROMPTS",
    "RELEASES",
    "LiveCodeBenchEnv",
    "build_prompt",
    "decode_private_tests",
    "encode_private_tests",
    "extract_python",
    "load_environment",
    "prelude_for",
    "stdout_matches",
]

logger = logging.getLogger("livecodebench")

DATASET = "livecodebench/code_generation_lite"
SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"
# The benchmark's files, one per release: release_vN holds test.jsonl .. testN.jsonl.
RELEASES = {
    "v1": "test.jsonl",
    "v2": "test2.jsonl",
    "v3": "test3.jsonl",
    "v4": "test4.jsonl",
    "v5": "test5.jsonl",
    "v6": "test6.jsonl",
}
COLUMNS = [
    "question_title",
    "question_content",
    "platform",
    "question_id",
    "contest_date",
    "starter_code",
    "difficulty",
    "public_test_cases",
    "private_test_cases",
    "metadata",
]
MAX_DECODED_BYTES = 512 * MiB
# Run before every program, as the benchmark's harness does: starter code uses `List[int]`
# annotations, and solutions commonly lean on these names without importing them. Equivalent to
# `import <modules>; from typing import *; from collections import *; ...`, but only the names a
# program mentions (a word match on its source) are imported: interpreter start-up is most of a
# test, and importing everything (`typing`, `re`) doubles it.
PRELUDE_MODULES = (
    "sys", "os", "io", "math", "re", "string", "random", "heapq", "bisect", "functools",
    "itertools", "collections", "operator",
)  # fmt: skip
STAR_MODULES = ("typing", "collections", "functools", "itertools", "heapq", "bisect")
MATH_NAMES = ("inf", "gcd", "lcm", "comb", "perm", "factorial", "isqrt", "sqrt", "log", "log2",
              "ceil", "floor")  # fmt: skip
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.cache
def _star_exports() -> dict[str, str]:
    """name -> module for the star imports, later modules winning as `import *` would."""
    owner: dict[str, str] = {}
    for module in STAR_MODULES:
        mod = importlib.import_module(module)
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for name in names:
            owner[name] = module
    for name in MATH_NAMES:
        owner[name] = "math"
    return owner


def prelude_for(code: str) -> str:
    """The imports binding every prelude name `code` mentions, then the recursion limit.
    Each module's names are imported in a try block: a name this host's Python has and the
    sandbox's lacks must not break a program that only mentions it."""
    words = set(_WORD.findall(code))
    lines = [f"import {', '.join(m for m in PRELUDE_MODULES if m in words or m == 'sys')}"]
    by_module: dict[str, list[str]] = {}
    for name, module in _star_exports().items():
        if name in words and name not in PRELUDE_MODULES:
            by_module.setdefault(module, []).append(name)
    for module, names in by_module.items():
        lines.append(f"try:\n    from {module} import {', '.join(sorted(names))}")
        lines.append("except ImportError:\n    pass")
    lines.append("sys.setrecursionlimit(50000)")
    return "\n".join(lines)


# -- private test encoding ------------------------------------------------------------------
class _DataOnlyUnpickler(pickle.Unpickler):
    """Unpickles plain data only. Every class, function or module reference in a pickle goes
    through `find_class` (GLOBAL, STACK_GLOBAL, INST, OBJ, NEWOBJ, REDUCE targets, the copyreg
    extension registry); refusing all of them leaves strings, bytes, numbers, booleans, None,
    lists, tuples, dicts and sets, so a crafted dataset row cannot run code on the host."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(
            f"private test data may only hold plain values; it references {module}.{name}"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("private test data may not use persistent ids")


def decode_private_tests(raw: Any, max_bytes: int = MAX_DECODED_BYTES) -> list[dict[str, Any]]:
    """The private tests of one row: plain JSON, or base64(zlib(pickle(JSON string))).

    Security: dataset content is untrusted. `pickle.loads` would run any callable the pickle
    names (on the trainer host, outside every sandbox), so we use `_DataOnlyUnpickler`, which
    refuses every global, and cap the decompressed size (`max_bytes`) against zlib bombs."""
    if raw is None or raw == "" or raw == []:
        return []
    if isinstance(raw, list):
        return _check_tests(raw, "private_test_cases")
    if not isinstance(raw, str):
        raise vf.ConfigError(f"private_test_cases must be a string, got {type(raw).__name__}")
    try:
        return _check_tests(json.loads(raw), "private_test_cases")
    except json.JSONDecodeError:
        pass
    try:
        blob = base64.b64decode(raw.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as e:
        raise vf.ConfigError(f"private_test_cases is neither JSON nor base64: {e}") from None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(blob, max_bytes)
    except zlib.error as e:
        raise vf.ConfigError(f"private_test_cases: bad zlib stream: {e}") from None
    if inflater.unconsumed_tail:
        raise vf.ConfigError(f"private_test_cases decompress to more than {max_bytes} bytes")
    try:
        value = _DataOnlyUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as e:
        raise vf.ConfigError(f"private_test_cases: refused or broken pickle: {e}") from None
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise vf.ConfigError(f"private_test_cases: decoded text is not JSON: {e}") from None
    return _check_tests(value, "private_test_cases")


def encode_private_tests(tests: list[dict[str, Any]]) -> str:
    """The benchmark's compressed form of a test list (for writing samples and tests)."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode("ascii")


def _check_tests(value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise vf.ConfigError(f"{what} must be a list of tests, got {type(value).__name__}")
    for i, t in enumerate(value):
        if not isinstance(t, dict) or not isinstance(t.get("input"), str):
            raise vf.ConfigError(f"{what}[{i}] must be an object with string 'input'/'output'")
        if not isinstance(t.get("output"), str):
            raise vf.ConfigError(f"{what}[{i}] must be an object with string 'input'/'output'")
    return value


# -- prompts and parsing --------------------------------------------------------------------
def extract_python(text: str) -> str | None:
    """The last ```python block of the answer (after any finished reasoning; none when a
    `<think>` was never closed). Blocks with another or no language tag do not count."""
    blocks = [
        body
        for lang, body in FENCE.findall(vf.strip_reasoning(text))
        if lang.lower() in ("python", "py")
    ]
    code = blocks[-1] if blocks else None
    return code if code and code.strip() else None


def _line_decimals(line: str) -> list[Decimal] | None:
    """The line's whitespace-separated tokens as decimals, or None when one is not a decimal
    (anything `Decimal()` reads is: `5.0`, `1e+18`, `inf`, `1_000`) or is a NaN, which equals
    nothing, as in the benchmark (where a signalling NaN's comparison raises)."""
    try:
        values = [Decimal(token) for token in line.split()]
    except (ArithmeticError, ValueError):  # decimal.InvalidOperation is an ArithmeticError
        return None
    return None if any(v.is_nan() for v in values) else values


def _stripped_lines(text: str) -> list[str]:
    # split on "\n" only, as the benchmark does: a lone "\r" does not end a line
    return [line.strip() for line in text.strip().split("\n")]


def stdout_matches(actual: str, expected: str) -> bool:
    """LiveCodeBench's stdout rule (its `grade_stdio`): the whole output and each line
    stripped, the same number of lines, and each line equal as text or, failing that, as a
    list of decimals (`0.50` == `0.5`, `5.0` == `5`; exact, no tolerance; a line with any token
    that is not a decimal must match as text)."""
    a_lines, e_lines = _stripped_lines(actual), _stripped_lines(expected)
    if len(a_lines) != len(e_lines):
        return False
    for a, e in zip(a_lines, e_lines, strict=True):
        if a == e:
            continue
        a_dec = _line_decimals(a)
        if a_dec is None or a_dec != _line_decimals(e):
            return False
    return True


# -- dataset --------------------------------------------------------------------------------
def _as_date(value: Any, what: str) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()
    except ValueError:
        raise vf.ConfigError(f"{what}: {value!r} is not an ISO date (YYYY-MM-DD)") from None


def _window_date(value: Any, what: str) -> date | None:
    """A start/end date argument: ISO (``2024-08-01``) or upstream's ``M/D/YYYY``
    (``8/1/2024``)."""
    if isinstance(value, str) and "/" in value:
        try:
            return datetime.strptime(value.strip(), "%m/%d/%Y").date()
        except ValueError:
            raise vf.ConfigError(
                f"{what}: {value!r} is not a date (YYYY-MM-DD or upstream's M/D/YYYY)"
            ) from None
    return _as_date(value, what)


#: upstream's ``version`` values: cumulative, ``vN`` = every release up to N (our
#: ``release_vN``; our own ``vN`` is release N alone).
UPSTREAM_VERSIONS = tuple(RELEASES)


def resolve_release(version: str | None, release_version: str | None) -> str:
    """The release selection from upstream's ``version`` and/or our ``release_version``."""
    if release_version is not None:
        if version not in (None, "v6"):
            raise vf.ConfigError(
                f"pass version={version!r} (upstream's cumulative name) or "
                f"release_version={release_version!r}, not both"
            )
        return release_version
    if version not in UPSTREAM_VERSIONS:
        raise vf.ConfigError(
            f"version must be one of {', '.join(UPSTREAM_VERSIONS)} (cumulative, as upstream), "
            f"got {version!r}; release_version selects single releases or ranges"
        )
    return f"release_{version}"


def release_files(release_version: str) -> list[str]:
    """`release_vN`: every file up to N (cumulative); `vN`: only release N's file;
    `vN_vM`: releases N..M."""
    tag = release_version.strip()
    m = re.fullmatch(r"release_v(\d)", tag)
    if m and f"v{m.group(1)}" in RELEASES:
        return [RELEASES[f"v{i}"] for i in range(1, int(m.group(1)) + 1)]
    m = re.fullmatch(r"v(\d)(?:_v(\d))?", tag)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if f"v{lo}" in RELEASES and f"v{hi}" in RELEASES and lo <= hi:
            return [RELEASES[f"v{i}"] for i in range(lo, hi + 1)]
    raise vf.ConfigError(
        f"unknown release_version {release_version!r}; use release_v1..release_v6 "
        "(cumulative), v1..v6 (one release) or vN_vM"
    )


def _versions(release_version: str) -> set[str]:
    files = set(release_files(release_version))
    return {v for v, f in RELEASES.items() if f in files}


def _load_rows(source: Any, release_version: str, dataset_name: str) -> tuple[Any, bool]:
    """(dataset, whether rows carry a `version` column). The hub's jsonl files are read
    directly (the dataset's loading script is not supported by current `datasets`), each row
    tagged with the release it belongs to."""
    if source in ("auto", "hub"):
        if hub_reachable():
            import datasets

            parts = []
            for version, name in RELEASES.items():
                if name not in release_files(release_version):
                    continue
                try:
                    part = datasets.load_dataset(
                        "json", data_files=f"hf://datasets/{dataset_name}/{name}", split="train"
                    )
                except Exception as e:
                    raise vf.ConfigError(f"could not load {dataset_name}/{name}: {e}") from e
                parts.append(part.add_column("version", [version] * len(part)))
            return datasets.concatenate_datasets(parts), True
        if source == "hub":
            raise vf.ConfigError(
                f"could not load {dataset_name}: the Hugging Face hub is unreachable"
            )
        logger.warning("using the bundled sample of %s: the hub is unreachable", dataset_name)
        source = "sample"
    ds = vf.load_dataset_source(None, source=source, sample=SAMPLE, required_columns=COLUMNS)
    return ds, "version" in ds.column_names


def _json_field(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as e:
            raise vf.ConfigError(f"{what} is not valid JSON: {e}") from None
    return value if value is not None else {}


def select_tests(n: int, k: int | None, seed: int, key: str) -> list[int]:
    """At most `k` of `n` test indices, ranked by sha256(seed, key, index) (machine- and
    order-independent); all of them when `k` is None/0 or n <= k."""
    if not k or n <= k:
        return list(range(n))
    rank = sorted(range(n), key=lambda i: hashlib.sha256(f"{seed}\0{key}\0{i}".encode()).digest())
    return sorted(rank[:k])


def process_row(
    row: dict[str, Any],
    index: int,
    max_num_tests: int | None,
    seed: int,
    official: dict[str, str] | None = None,
) -> dict[str, Any]:
    where = f"row {index} ({row.get('question_id', '?')})"
    content = row.get("question_content")
    if not isinstance(content, str) or not content.strip():
        raise vf.ConfigError(f"{where}: question_content must be a non-empty string")
    public = _check_tests(_json_field(row.get("public_test_cases"), f"{where}: public"), where)
    try:
        private = decode_private_tests(row.get("private_test_cases"))
    except vf.ConfigError as e:
        raise vf.ConfigError(f"{where}: {e}") from None
    tests = public + private
    if not tests:
        raise vf.ConfigError(f"{where}: no public or private tests")
    metadata = _json_field(row.get("metadata"), f"{where}: metadata")
    if not isinstance(metadata, dict):
        raise vf.ConfigError(f"{where}: metadata must be a JSON object")
    starter = row.get("starter_code") or ""
    functional = {t.get("testtype", "stdin") for t in tests} == {"functional"}
    if not functional and any(t.get("testtype") == "functional" for t in tests):
        raise vf.ConfigError(f"{where}: mixes functional and stdin tests")
    fn_name = metadata.get("func_name") if functional else None
    if functional and not (isinstance(fn_name, str) and fn_name):
        raise vf.ConfigError(f"{where}: functional tests need metadata.func_name")
    chosen = select_tests(len(tests), max_num_tests, seed, str(row.get("question_id") or content))
    inputs, outputs = [], []
    for i in chosen:
        t = tests[i]
        inputs.append(t["input"])
        if functional:
            try:
                outputs.append(json.loads(t["output"]))
            except json.JSONDecodeError as e:
                raise vf.ConfigError(f"{where}: functional output is not JSON: {e}") from None
        else:
            outputs.append(t["output"])
    return {
        "question": build_prompt(content, starter, official),
        "answer": "",
        "task": "livecodebench",
        "info": {
            "tests": json.dumps({"inputs": inputs, "outputs": outputs, "fn_name": fn_name}),
            "num_test_cases": len(chosen),
            "question_id": str(row.get("question_id") or ""),
            "question_title": str(row.get("question_title") or ""),
            "platform": str(row.get("platform") or ""),
            "difficulty": str(row.get("difficulty") or ""),
            "contest_date": str(row.get("contest_date") or ""),
            "version": str(row.get("version") or ""),
            "comparison": json.dumps(metadata.get("comparison") or {}),
        },
    }


# -- the environment ------------------------------------------------------------------------
class LiveCodeBenchEnv(vf.CodeEnv):
    """CodeEnv with LiveCodeBench's strict ```python extraction and exact comparisons."""

    def get_code(self, completion: Any) -> str | None:
        for message in reversed(completion or []):
            if isinstance(message, dict) and message.get("role") == "assistant":
                return extract_python(content_text(message))
        return None

    def prepare_code(self, code: str, state: Any) -> str:
        return vf.with_prelude(code, prelude_for)

    def compare_stdout(self, actual: str, expected: str, cmp: Comparison | None = None) -> bool:
        # the benchmark's rule for every problem: a float equal to an integer answers it on
        # stdout already, so `int_accepts_float` changes nothing here
        return stdout_matches(actual, expected)

    def compare_values(self, actual: Any, expected: Any, cmp: Comparison | None = None) -> bool:
        # integers and strings exactly, floats within `float_tol`, tuples equal lists, True is
        # not 1; no unwrapping of one-element lists: the expected value is the whole value
        return values_equal(actual, expected, cmp or self.comparison)


def num_test_cases(info: dict[str, Any]) -> float:
    """How many tests the problem is graded on."""
    return float(info.get("num_test_cases") or 0)


def load_environment(
    dataset_name: str = DATASET,
    version: str | None = "v6",
    difficulty: str | list[str] | None = None,
    start_date: str | None = "2024-08-01",
    end_date: str | None = "2025-05-01",
    system_prompt: Any = SYSTEM_PROMPT,
    timeout_per_test: float = 6.0,
    max_retries: int = 5,
    pool_size: int = 10,
    source: Any = "auto",
    release_version: str | None = None,
    platform: str | list[str] | None = None,
    num_examples: int = -1,
    max_num_tests: int | None = None,
    seed: int = 42,
    stop_after_timeout: bool = True,
    float_tol: float = 1e-6,
    int_accepts_float: bool = False,
    sandbox_retries: int | None = None,
    memory_mb: int = 1024,
    provider: Any = None,
    sampling_args: dict[str, Any] | None = None,
    prompt_template: str | None = None,
) -> vf.Environment:
    """Build the LiveCodeBench code-generation environment.

    No ``**kwargs``: an argument this function does not name is a TypeError (and a ConfigError
    listing the accepted ones through ``vf.load_environment``), never silently stored. The
    first nine arguments are upstream's, with its meanings and defaults.

    Args:
        dataset_name: the hub dataset whose jsonl files source "auto"/"hub" reads.
        version: upstream's release selection, cumulative: "vN" is every release up to N
            (= release_version "release_vN"); "v6" by default.
        source: "auto" (the hub's jsonl files when reachable, else the bundled sample), "hub",
            "sample", a local .jsonl/.parquet path or save_to_disk folder, or a list of rows.
        release_version: ours, overriding ``version``: "release_v1".."release_v6"
            (cumulative, as the benchmark defines them), "v1".."v6" (one release) or "vN_vM".
            Local rows are filtered by their `version` column when they have one.
        start_date / end_date: keep problems with start_date <= contest_date <= end_date
            (ISO dates or upstream's M/D/YYYY, inclusive; None: open).
        max_retries: sandbox attempts per rollout (upstream's meaning: 5 attempts, i.e. up
            to 4 replacements of a failing sandbox) before the rollout is an infra error.
        difficulty: keep only these difficulties ("easy", "medium", "hard").
        platform: keep only these platforms ("leetcode", "atcoder", "codeforces").
        num_examples: keep at most this many problems (-1: all).
        max_num_tests: grade on at most this many tests (public + private), chosen by
            sha256(seed, question_id, index); None (default): every test, as the benchmark does.
        seed: seed of the test subsample.
        timeout_per_test: wall-clock seconds per test, really applied.
        stop_after_timeout: once a test times out, fail the rest without running them.
        float_tol: relative and absolute tolerance of float return values (functional tests);
            integers and strings are compared exactly. Stdout follows the benchmark: lines
            equal as text, else as exact decimals (`0.50` for `0.5`, `5.0` for `5`).
        int_accepts_float: accept a float equal to an expected integer (`5.0` for `5`) in
            functional results, for every problem; a row may say so itself with
            `metadata.comparison`. (Stdout accepts it always, as the benchmark does.)
        system_prompt: the system message (None: none); ``"official"``: LiveCodeBench's
            published one (`OFFICIAL_PROMPTS`, fetched at load time and cached on disk); a
            `vf.PromptSource` dict loads another published text.
        sandbox_retries: ours, overriding ``max_retries``: replacements of a failing sandbox
            (attempts - 1).
        pool_size: warm sandboxes kept ready (upstream's default, 10).
        memory_mb: memory limit of one sandbox.
        provider: a `verifiers.sandbox` provider (default: bwrap, else the process tier).
        sampling_args: default sampling arguments of the environment.
        prompt_template: the user message's layout: None (ours) or ``"official"``
            (LiveCodeBench's generic chat layout with its published formatting messages,
            fetched at load time and cached).
    """
    release_version = resolve_release(version, release_version)
    if system_prompt is not None:
        system_prompt = vf.resolve_prompt(
            system_prompt,
            SYSTEM_PROMPT,
            [prompts.OFFICIAL_PROMPTS["system"]],
            argument="system_prompt",
        )
    if prompt_template is None:
        official = None
    elif isinstance(prompt_template, str) and prompt_template.strip().lower() == "official":
        official = prompts.official_formats()
    else:
        raise vf.ConfigError(f"prompt_template must be None or 'official', got {prompt_template!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 1:
        raise vf.ConfigError(f"max_retries must be an integer >= 1, got {max_retries!r}")
    if sandbox_retries is None:
        sandbox_retries = max_retries - 1
    elif max_retries != 5:
        raise vf.ConfigError("pass max_retries (attempts) or sandbox_retries, not both")
    wanted = _versions(release_version)
    lo = _window_date(start_date, "start_date")
    hi = _window_date(end_date, "end_date")
    ds, has_version = _load_rows(source, release_version, dataset_name)
    difficulties = {difficulty} if isinstance(difficulty, str) else set(difficulty or ())
    platforms = {platform} if isinstance(platform, str) else set(platform or ())
    if not has_version:
        logger.info("rows have no 'version' column: release_version does not filter them")
    rows: list[dict[str, Any]] = []
    for i, row in enumerate(ds):
        if 0 <= num_examples <= len(rows):
            break
        if has_version and row.get("version") not in wanted:
            continue
        when = _as_date(row.get("contest_date"), f"row {i}: contest_date")
        if (lo or hi) and when is None:
            raise vf.ConfigError(f"row {i}: no contest_date to filter by")
        if when is not None and ((lo and when < lo) or (hi and when > hi)):
            continue
        if difficulties and row.get("difficulty") not in difficulties:
            continue
        if platforms and row.get("platform") not in platforms:
            continue
        rows.append(process_row(row, i, max_num_tests, seed, official))
    if not rows:
        raise vf.ConfigError(
            f"no LiveCodeBench problems in {release_version} between {start_date} and {end_date}"
            + (f" with difficulty {sorted(difficulties)}" if difficulties else "")
            + (f" on {sorted(platforms)}" if platforms else "")
        )
    from datasets import Dataset

    return LiveCodeBenchEnv(
        eval_dataset=Dataset.from_list(rows),
        system_prompt=system_prompt,
        timeout_per_test=timeout_per_test,
        stop_after_timeout=stop_after_timeout,
        sandbox_retries=sandbox_retries,
        provider=provider,
        comparison=Comparison(
            float_rel_tol=float_tol,
            float_abs_tol=float_tol,
            int_accepts_float=int_accepts_float,
            strings="exact",
        ),
        spec=SandboxSpec(memory=memory_mb * MiB, pids=64, disk=64 * MiB, lifetime=3600),
        pool_size=pool_size,
        rubric=vf.Rubric(funcs=[num_test_cases], weights=[0.0]),
        sampling_args=sampling_args,
    )
