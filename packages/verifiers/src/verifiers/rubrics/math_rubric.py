"""MathRubric: ``correct_answer`` graded by math-verify in a pool of worker processes.

math-verify bounds its own work with ``signal.alarm``, which only works in a main thread
(in a thread it raises, or, with timeouts off, can hang forever). So grading never runs
on the event loop or in a thread: it runs in `ProcessPool` workers, each its own main
thread, where math-verify's per-operation alarms apply, and the pool adds a hard SIGKILL
timeout on top for anything that ignores signals.

No grading warm-up: the pool is one per process and size, shared by every MathRubric
(`shared_pools`). Constructing a rubric starts, in the background, the pool's forkserver
(which imports math-verify and grades a few answers once, `verifiers.utils.math_warm`) and
one worker forked from it; so a run's first grading finds a warm worker, and a worker killed
on a timeout is replaced by a fork of a warm process, in milliseconds. The pool stops when
the last rubric holding it is torn down (``await rubric.teardown()``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from verifiers.parsers import MaybeThinkParser
from verifiers.parsers.parser import content_text
from verifiers.rubrics.rubric import Rubric
from verifiers.utils.answers import extract_boxed_answer
from verifiers.utils.math_grading import grade_math_answer, warm_up
from verifiers.utils.process_pool import (
    MINIMAL_FORKSERVER,
    ProcessPool,
    WorkerTimeoutError,
    default_pool_size,
)

__all__ = [
    "MathRubric",
    "grade_math_answer",
    "question_text",
    "strict_boxed_answer",
    "verify_response",
]

TIMEOUT_STATE_KEY = "math_verify_timeout"
MAX_QUEUED_GRADINGS = 1_000_000


def strict_boxed_answer(text: str) -> str:
    """The last ``\\boxed{}`` of the final answer, or "" (no box, or unfinished reasoning).

    Used after `MaybeThinkParser` dropped everything up to the last ``</think>``: a
    ``<think>`` still present means the reasoning never closed (a truncated response),
    so a box in it is not a final answer.
    """
    if "<think>" in text:
        return ""
    return extract_boxed_answer(text, strict=True)


class _SharedPools:
    """One grading pool per size in a process, shared by every `MathRubric` (an EnvGroup of
    math environments, a judge-fallback rubric around one) and held by reference: it
    stops when the last rubric holding it lets go (``teardown``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[int, tuple[ProcessPool, int]] = {}

    def acquire(self, size: int | None) -> ProcessPool:
        key = default_pool_size() if size is None else int(size)
        with self._lock:
            pool, holders = self._pools.get(key, (None, 0))
            if pool is None or pool.closed:
                pool, holders = self._new_pool(key), 0
            self._pools[key] = (pool, holders + 1)
        # Start the forkserver (math-verify imported and warmed once, in it) and one
        # worker now, in the background: the first grading finds them ready instead of
        # waiting seconds for them; every later worker is a fork of a warm process.
        pool.prestart(1)
        return pool

    def release(self, pool: ProcessPool) -> None:
        with self._lock:
            key = pool.size
            held = self._pools.get(key)
            if held is None or held[0] is not pool:
                return
            if held[1] > 1:
                self._pools[key] = (pool, held[1] - 1)
                return
            del self._pools[key]
        pool.close()

    @staticmethod
    def _new_pool(size: int) -> ProcessPool:
        return ProcessPool(
            size,
            # Modules that import math-verify and the exact layer, not the SDK (a worker
            # unpickles grade_math_answer from math_grading); math_warm grades a few answers
            # when imported: the forkserver pays math-verify's imports and caches once, and
            # every worker it forks starts warm.
            preload=("math_verify", "verifiers.utils.math_grading", "verifiers.utils.math_warm"),
            initializer=warm_up,
            # The environment already bounds concurrent rollouts; a grading must wait its
            # turn rather than fail, so the queue bound is only a backstop.
            max_queued=MAX_QUEUED_GRADINGS,
            # Workers fork from a server that imported the preload only: multiprocessing's
            # forkserver would also import the main script (for `vf-eval`, the whole SDK).
            start_method=MINIMAL_FORKSERVER,
            name="vf-math-verify",
        )


shared_pools = _SharedPools()


def __getattr__(name: str) -> Any:
    """``parse`` and ``verify``: math-verify's, as upstream 0.3's module exposes them (tests
    patch them there), imported on first use so that ``import verifiers`` does not pay it."""
    if name in ("parse", "verify"):
        import math_verify

        return getattr(math_verify, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def verify_response(
    response: str, answer: str, max_verify_chars: int, timeout_seconds: int = 5
) -> tuple[float, float]:
    """Upstream 0.3's in-process grading, for code that calls it: ``(score, elapsed
    seconds)`` of bare math-verify (``verify(parse(boxed answer), parse(boxed response))``,
    no exact layer) in this process and thread; an empty or overlong response, an error or
    math-verify's own timeout score 0; anything else (cancellation, Ctrl-C) propagates.
    `MathRubric` itself grades in its pool with the exact layer (`grade_math_answer`)."""
    from math_verify.errors import TimeoutException

    module = globals()
    parse_fn = module.get("parse") or __getattr__("parse")  # a patched name wins
    verify_fn = module.get("verify") or __getattr__("verify")
    start = time.perf_counter()
    if not response or len(response) > max_verify_chars:
        return 0.0, time.perf_counter() - start
    try:
        gold = parse_fn(f"\\boxed{{{answer}}}", parsing_timeout=timeout_seconds)
        target = parse_fn(f"\\boxed{{{response}}}", parsing_timeout=timeout_seconds)
        score = float(verify_fn(gold, target, timeout_seconds=timeout_seconds))
    except (Exception, TimeoutException):  # math-verify's timeout is a BaseException
        score = 0.0
    return score, time.perf_counter() - start


def question_text(prompt: Any) -> str:
    """Text of the prompt's last user message (what the answer is asked for)."""
    if isinstance(prompt, str):
        return prompt
    users = [m for m in prompt or [] if isinstance(m, dict) and m.get("role") == "user"]
    return content_text(users[-1]) if users else ""


class MathRubric(Rubric):
    """Adds ``correct_answer`` (weight 1): 1.0 iff the boxed answer equals the gold answer,
    per math-verify with the exact layer (`verifiers.utils.exact_answers`) deciding first
    the cases math-verify gets wrong (structure, decimals, percentages, degrees, units).

    ``numeric_rel_tol`` is the tolerance this rubric states for decimals: a decimal answer
    matches a non-integer gold within that relative error (default 0: only exactly, so
    ``1.5707963`` is not ``\\frac{\\pi}{2}``). ``strict_units``: different units that cannot be
    converted are wrong (default: math-verify's verdict, which ignores units).

    Scores 0.0 for: no final ``\\boxed{}`` (strict, after the last ``</think>``), an answer
    longer than ``max_verify_chars``, a wrong answer, or a grading that timed out. A timeout
    is a legitimate ungradeable answer, not an infra failure; it is recorded as
    ``state["math_verify_timeout"] = True`` and counted in ``self.timeouts``. A worker that
    crashes raises `WorkerCrashedError` (an `InfraError`), which marks the rollout.

    ``timeout_seconds`` bounds a grading: one that uses more CPU time than that scores 0 as
    timed out (upstream's rule), math-verify's per-operation alarms stop it after that
    rounded up to whole seconds (``signal.alarm`` counts in seconds), and the worker is
    killed after ``hard_timeout_seconds`` (4 × the rounded limit + 1: two parses, the exact
    layer and the comparisons), counted from when the grading starts, not from its wait
    for a worker.
    """

    def __init__(
        self,
        funcs: Sequence[Callable[..., Any]] | None = None,
        weights: Sequence[float] | None = None,
        parser: Any = None,
        max_workers: int | None = None,
        timeout_seconds: float = 5.0,
        max_verify_chars: int = 50_000,
        numeric_rel_tol: float = 0.0,
        strict_units: bool = False,
        **kwargs: Any,
    ) -> None:
        if parser is None:
            parser = MaybeThinkParser(extract_fn=strict_boxed_answer)
        super().__init__(funcs=funcs, weights=weights, parser=parser, **kwargs)
        if not timeout_seconds or timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive: math-verify needs its timeouts")
        self.max_workers = max_workers
        self.timeout_seconds = timeout_seconds
        # A float here would make signal.alarm raise inside math-verify, which swallows it
        # and returns "no answer": every grading would silently score 0.
        self.signal_timeout = max(1, math.ceil(timeout_seconds))
        self.hard_timeout_seconds = 4.0 * self.signal_timeout + 1.0
        if not 0.0 <= numeric_rel_tol < 1.0:
            raise ValueError(f"numeric_rel_tol must be in [0, 1), got {numeric_rel_tol}")
        self.numeric_rel_tol = numeric_rel_tol
        self.strict_units = strict_units
        self.max_verify_chars = max_verify_chars
        self.timeouts = 0
        self._pool: ProcessPool | None = None
        self.add_reward_func(self.correct_answer)
        self.pool  # noqa: B018  (start grading workers now, in the background)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled or copied without its hold on this process's pool (locks, processes): a
        copy takes the pool of the process it is used in, on first use."""
        state = self.__dict__.copy()
        state["_pool"] = None
        return state

    @property
    def pool(self) -> ProcessPool:
        """The worker pool this rubric grades in: the process's shared pool of its size
        (`shared_pools`), taken at construction, whose first worker starts in the
        background then, and taken again on use after ``teardown``."""
        if self._pool is None or self._pool.closed:
            if self._pool is not None:
                shared_pools.release(self._pool)
            self._pool = shared_pools.acquire(self.max_workers)
        return self._pool

    def grading_args(self, completion: Any, answer: Any, prompt: Any = None) -> tuple | None:
        """The arguments of `grade_math_answer` for this rollout, or None when it scores 0
        without grading (no final box, no gold, an answer over ``max_verify_chars``).
        Public so that a table can be graded in-process exactly as the pool grades it."""
        response = self.parser.parse_answer(completion) or ""
        gold = "" if answer is None else str(answer).strip()
        if not response or not gold or len(response) > self.max_verify_chars:
            return None
        return (
            gold,
            response,
            self.signal_timeout,
            self.numeric_rel_tol,
            question_text(prompt),
            self.strict_units,
            self.timeout_seconds,
        )

    async def correct_answer(
        self, completion: Any, answer: Any, state: Any = None, prompt: Any = None, **kwargs: Any
    ) -> float:
        """1.0 if the final boxed answer equals ``answer`` (see the class doc), else 0.0."""
        args = self.grading_args(completion, answer, prompt)
        if args is None:
            return 0.0
        try:
            score, timed_out = await self.pool.run(
                grade_math_answer, *args, timeout=self.hard_timeout_seconds
            )
        except WorkerTimeoutError:
            score, timed_out = 0.0, True
        if timed_out:
            self.timeouts += 1
            if state is not None:
                state[TIMEOUT_STATE_KEY] = True
        return score

    async def teardown(self) -> None:
        """Let go of the shared pool (its workers stop when no rubric holds it); the rubric
        stays usable (it takes a pool again on next use)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            shared_pools.release(pool)
        await super().teardown()
