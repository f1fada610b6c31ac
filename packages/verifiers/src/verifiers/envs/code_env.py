"""CodeEnv: the model answers with a program; the last fenced code block is run against test
cases in a fresh sandbox, one command per test with its own timeout.

Test cases come from `info["tests"]` (or the `answer` column as JSON), either as a list of
`{"input": ..., "output": ...}` stdin/stdout cases, or in the APPS / LiveCodeBench form
`{"inputs": [...], "outputs": [...], "fn_name": "f"}`. With `fn_name` each input is the call's
arguments (a JSON list, a dict of keyword arguments, or one JSON value per line) and the function
is looked up on the module or on a `Solution()` instance. Comparison (`comparison`, a
`verifiers.envs.code_compare.Comparison`; a problem may override fields in
`info["comparison"]`): integers exactly, floats within a stated tolerance, strings exactly,
stdout token by token with the same number rules. Rewards: `passed` (all tests pass,
weight 1) and `pass_rate` (fraction passed, weight 0 unless configured).

Sandbox failures: a sandbox that cannot be created or dies outside the solution's own test run
is replaced, up to `sandbox_retries` times; after that the rewards raise `SandboxError` (an
infra error: the rollout is masked, never scored 0). A test during which the sandbox dies is
rerun once on a fresh sandbox; if it kills that one too, the solution did it (`os.kill(-1)`,
say) and the test fails with status `sandbox_killed`."""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from verifiers.envs import code_compare as compare
from verifiers.envs.code_compare import DEFAULT as DEFAULT_COMPARISON
from verifiers.envs.code_compare import Comparison
from verifiers.envs.sandbox_env import default_provider, resolve_provider
from verifiers.envs.singleturn_env import SingleTurnEnv
from verifiers.errors import ConfigError, SandboxError
from verifiers.rubrics.rubric import Rubric
from verifiers.rubrics.rubric_group import RubricGroup
from verifiers.sandbox.base import MiB, Provider, ProviderUnavailableError, Sandbox, SandboxSpec
from verifiers.sandbox.pool import InUse, SandboxPool
from verifiers.state import State
from verifiers.types import Messages

logger = logging.getLogger("verifiers.sandbox")

FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
RESULT_MARK = "\n<<<VF-RESULT>>>"

# Runs inside the sandbox: import the solution, call the function, print its JSON result.
CALL_HARNESS = r"""
import json, sys
sys.setrecursionlimit(100000)
sys.path.insert(0, ".")
fn_name, raw = sys.argv[1], sys.stdin.read()
args = json.loads(raw)
import solution as mod
target = mod.Solution() if hasattr(mod, "Solution") else mod
fn = getattr(target, fn_name)
value = fn(**args) if isinstance(args, dict) else fn(*args)
def plain(v):
    if isinstance(v, (tuple, list)): return [plain(x) for x in v]
    if isinstance(v, set): return sorted(plain(x) for x in v)
    if isinstance(v, dict): return {str(k): plain(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)): return v
    return repr(v)
sys.stdout.write("MARK" + json.dumps(plain(value)))
""".replace("MARK", RESULT_MARK.replace("\n", "\\n"))


def extract_code(
    text: str, languages: Sequence[str] = ("python", "py", "python3", "")
) -> str | None:
    """The last fenced block in `text` whose language tag is in `languages` (any, if empty)."""
    blocks = [(lang.lower(), body) for lang, body in FENCE.findall(text or "")]
    if languages:
        blocks = [b for b in blocks if b[0] in languages] or blocks
    return blocks[-1][1] if blocks else None


# -- comparison -------------------------------------------------------------------------------
# The rules live in `verifiers.envs.code_compare` (integers exact, floats within a stated
# tolerance, strings as the environment says); these wrappers keep the old call signatures.
def tokens_equal(a: str, b: str, cmp: Comparison = DEFAULT_COMPARISON) -> bool:
    return compare.tokens_equal(a, b, cmp)


def outputs_match(actual: str, expected: str, cmp: Comparison = DEFAULT_COMPARISON) -> bool:
    """Whitespace-insensitive output comparison: same tokens, integers exact, floats within
    the tolerance of `cmp`."""
    return compare.outputs_match(actual, expected, cmp)


def values_match(actual: Any, expected: Any, cmp: Comparison = DEFAULT_COMPARISON) -> bool:
    """Deep equality by `cmp`'s rules (tuples equal lists, True is not 1). APPS wraps single
    outputs in a list: that form matches too."""
    if compare.values_equal(actual, expected, cmp):
        return True
    return (
        isinstance(expected, list)
        and len(expected) == 1
        and compare.values_equal(actual, expected[0], cmp)
    )


def _values_equal(a: Any, b: Any, cmp: Comparison = DEFAULT_COMPARISON) -> bool:
    return compare.values_equal(a, b, cmp)


def comparison_from(base: Comparison, overrides: Any) -> Comparison:
    """`base` with a problem's own overrides (`info["comparison"]`: a dict or its JSON, e.g.
    `{"int_accepts_float": true}` where the problem statement accepts floats)."""
    if overrides is None or overrides == "" or overrides == {}:
        return base
    if isinstance(overrides, str):
        try:
            overrides = json.loads(overrides)
        except json.JSONDecodeError as e:
            raise ConfigError(f"info['comparison'] is not valid JSON: {e}") from None
    if not isinstance(overrides, dict):
        raise ConfigError("info['comparison'] must be an object")
    # null means "not set" (Arrow fills the fields one row has into every row's struct)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    known = {f.name for f in fields(Comparison)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(f"info['comparison']: unknown field(s) {unknown}; known: {sorted(known)}")
    return replace(base, **overrides)


# -- test cases -------------------------------------------------------------------------------
@dataclass
class TestCase:
    __test__ = False  # not a pytest class
    input: Any
    output: Any
    fn_name: str | None = None


@dataclass
class TestResult:
    __test__ = False
    passed: bool
    status: str  # passed | wrong_answer | runtime_error | timeout | no_code
    detail: str = ""
    duration: float = 0.0


def parse_tests(spec: Any) -> list[TestCase]:
    if isinstance(spec, str):
        spec = json.loads(spec)
    if isinstance(spec, dict):
        fn = spec.get("fn_name") or None
        return [
            TestCase(i, o, fn)
            for i, o in zip(spec.get("inputs", []), spec.get("outputs", []), strict=True)
        ]
    return [TestCase(t["input"], t["output"], t.get("fn_name")) for t in spec or []]


def _literal(line: str) -> Any:
    """One argument: JSON, else a Python literal (`True`, `None`, `'a'`, tuples); never eval."""
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return ast.literal_eval(line.strip())


def _call_args(raw: Any) -> Any:
    if isinstance(raw, (list, dict)):
        return raw
    if isinstance(raw, str):
        lines = [line for line in raw.splitlines() if line.strip()]
        try:
            return [_literal(line) for line in lines]
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return [raw]
    return [raw]


async def run_test(
    box: Sandbox,
    case: TestCase,
    timeout: float,  # noqa: ASYNC109
    compare_stdout: Callable[[str, str], bool] = outputs_match,
    compare_values: Callable[[Any, Any], bool] = values_match,
) -> TestResult:
    if case.fn_name:
        r = await box.exec(
            ["python3", "-c", CALL_HARNESS, case.fn_name],
            stdin=json.dumps(_call_args(case.input)),
            timeout=timeout,
        )
    else:
        stdin = case.input if isinstance(case.input, str) else "\n".join(map(str, case.input))
        r = await box.exec(["python3", "solution.py"], stdin=stdin, timeout=timeout)
    if r.timed_out:
        return TestResult(False, "timeout", f"over {timeout:g}s", r.duration)
    if r.exit_code != 0:
        return TestResult(False, "runtime_error", r.stderr[-2000:], r.duration)
    if case.fn_name:
        if RESULT_MARK not in r.stdout:
            return TestResult(False, "runtime_error", "no result", r.duration)
        try:
            value = json.loads(r.stdout.rsplit(RESULT_MARK, 1)[1])
        except json.JSONDecodeError:  # the solution wrote after the harness's result line
            return TestResult(False, "wrong_answer", "unreadable result", r.duration)
        ok = compare_values(value, case.output)
        got = value
    else:
        expected = case.output if isinstance(case.output, str) else "\n".join(map(str, case.output))
        ok = compare_stdout(r.stdout, expected)
        got = r.stdout[:500]
    return TestResult(
        ok, "passed" if ok else "wrong_answer", "" if ok else repr(got)[:500], r.duration
    )


class CodeEnv(SingleTurnEnv):
    """Single-turn code generation graded by running tests in a sandbox."""

    def __init__(
        self,
        timeout_per_test: float = 6.0,
        max_tests: int | None = None,
        stop_on_first_failure: bool = False,
        stop_after_timeout: bool = False,
        sandbox_retries: int = 2,
        pass_rate_weight: float = 0.0,
        passed_weight: float = 1.0,
        languages: Sequence[str] = ("python", "py", "python3", ""),
        provider: Provider | str | None = None,
        spec: SandboxSpec | None = None,
        pool_size: int = 4,
        rubric: Rubric | None = None,
        comparison: Comparison | None = None,
        **kwargs: Any,
    ) -> None:
        self.comparison = comparison or DEFAULT_COMPARISON
        self.code_rubric = Rubric(
            funcs=[self.passed, self.pass_rate], weights=[passed_weight, pass_rate_weight]
        )
        full = self.code_rubric if rubric is None else RubricGroup([self.code_rubric, rubric])
        super().__init__(rubric=full, **kwargs)
        self.timeout_per_test = timeout_per_test
        self.max_tests = max_tests
        self.stop_on_first_failure = stop_on_first_failure
        self.stop_after_timeout = stop_after_timeout
        self.sandbox_retries = max(0, sandbox_retries)
        self.languages = tuple(languages)
        self.spec = spec or SandboxSpec(memory=512 * MiB, pids=64, disk=64 * MiB, lifetime=600)
        self._provider = resolve_provider(provider)  # a name, or VF_SANDBOX_PROVIDER
        self._owns_provider = not isinstance(provider, Provider)
        self.pool_size = pool_size
        self._pool: SandboxPool | None = None
        self._runs: dict[int, asyncio.Task[list[TestResult]]] = {}
        self._in_use = InUse(self._close_pool)  # the warm pool lives while generate runs

    @property
    def pool(self) -> SandboxPool:
        if self._pool is None:
            if self._provider is None:
                self._provider = default_provider()
            self._pool = SandboxPool(self._provider, self.spec, size=self.pool_size)
        return self._pool

    def get_tests(self, state: State) -> list[TestCase]:
        """Override for other dataset layouts."""
        info = state.get("info") or {}
        raw = info.get("tests") if isinstance(info, dict) else None
        if raw is None:
            raw = info.get("test_cases") if isinstance(info, dict) else None
        if raw is None:
            raw = state.get("answer")
        tests = parse_tests(raw)
        return tests[: self.max_tests] if self.max_tests else tests

    def get_code(self, completion: Messages) -> str | None:
        for message in reversed(completion or []):
            if message.get("role") == "assistant":
                content = message.get("content")
                text = content if isinstance(content, str) else self.parser.parse(str(content))
                return extract_code(text or "", self.languages)
        return None

    async def run_tests(self, state: State) -> list[TestResult]:
        """Run every test once per rollout (the rewards share the result)."""
        if "test_results" in state:
            return [TestResult(**r) for r in state["test_results"]]
        key = id(state)
        task = self._runs.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._run_tests(state))
            self._runs[key] = task
        try:
            results = await asyncio.shield(task)
        finally:
            if task.done():
                self._runs.pop(key, None)
        state["test_results"] = [asdict(r) for r in results]
        return results

    def prepare_code(self, code: str, state: State) -> str:
        """The program written to `solution.py` (override to add a prelude, say)."""
        return code

    def comparison_for(self, state: State) -> Comparison:
        """The environment's comparison policy with the problem's `info["comparison"]`."""
        info = state.get("info") or {}
        return comparison_from(
            self.comparison, info.get("comparison") if isinstance(info, dict) else None
        )

    def compare_stdout(self, actual: str, expected: str, cmp: Comparison | None = None) -> bool:
        """Whether a stdin/stdout test's output matches (override for other rules)."""
        return outputs_match(actual, expected, cmp or self.comparison)

    def compare_values(self, actual: Any, expected: Any, cmp: Comparison | None = None) -> bool:
        """Whether a function-call test's return value matches."""
        return values_match(actual, expected, cmp or self.comparison)

    def _skip(self, results: list[TestResult]) -> bool:
        if not results:
            return False
        last = results[-1]
        if last.status == "skipped":
            return True
        if self.stop_on_first_failure and not last.passed:
            return True
        return self.stop_after_timeout and last.status == "timeout"

    async def _run_tests(self, state: State) -> list[TestResult]:
        tests = self.get_tests(state)
        code = self.get_code(state.get("completion") or [])
        if code is None:
            return [TestResult(False, "no_code", "no fenced code block") for _ in tests]
        code = self.prepare_code(code, state)
        cmp = self.comparison_for(state)

        def stdout_ok(actual: str, expected: str) -> bool:
            return self.compare_stdout(actual, expected, cmp)

        def value_ok(actual: Any, expected: Any) -> bool:
            return self.compare_values(actual, expected, cmp)

        results: list[TestResult] = []
        infra_failures = 0  # sandboxes that failed outside the solution's test runs
        killed_on = -1  # the test that killed the previous sandbox
        while len(results) < len(tests):
            box: Sandbox | None = None
            running = False
            try:
                box = await self.pool.acquire()
                await box.write_file("solution.py", code)
                while len(results) < len(tests):
                    if self._skip(results):
                        results.append(TestResult(False, "skipped"))
                        continue
                    running = True
                    result = await run_test(
                        box,
                        tests[len(results)],
                        self.timeout_per_test,
                        stdout_ok,
                        value_ok,
                    )
                    running = False
                    results.append(result)
            except ProviderUnavailableError:
                raise  # retrying cannot help; the message says what is missing
            except SandboxError as e:
                index = len(results)
                if running and killed_on == index:
                    # a fresh sandbox died on the same test again: the solution kills it
                    results.append(TestResult(False, "sandbox_killed", str(e)[:500]))
                    killed_on = -1
                elif running:
                    killed_on = index  # rerun this test once on a fresh sandbox
                    logger.info("sandbox died during test %d (%s); rerunning it", index, e)
                else:
                    infra_failures += 1
                    if infra_failures > self.sandbox_retries:
                        raise SandboxError(
                            f"sandbox failed {infra_failures} time(s) while grading: {e}"
                        ) from e
                    logger.warning("sandbox failed (%s); retrying on a fresh one", e)
                    await asyncio.sleep(min(2.0, 0.05 * 2**infra_failures))
            finally:
                if box is not None:
                    await asyncio.shield(self.pool.release(box))
        return results

    async def passed(self, state: State) -> float:
        results = await self.run_tests(state)
        return 1.0 if results and all(r.passed for r in results) else 0.0

    async def pass_rate(self, state: State) -> float:
        results = await self.run_tests(state)
        return sum(r.passed for r in results) / len(results) if results else 0.0

    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        return await self._in_use.run(super().generate(*args, **kwargs))

    async def _close_pool(self) -> None:
        if self._pool is not None:
            await self._pool.close()

    async def teardown(self) -> None:
        for task in list(self._runs.values()):
            task.cancel()
        await asyncio.gather(*self._runs.values(), return_exceptions=True)
        self._runs.clear()
        await self._close_pool()
        if self._owns_provider and self._provider is not None:
            await self._provider.close()
        await super().teardown()
