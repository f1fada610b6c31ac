"""Regenerate i3_code/data/sample.jsonl: self-written problems in the INTELLECT-3-RL `code` layout
(`question`, `info` as a JSON string whose `tests` is itself a JSON string, the difficulty
column). Expected outputs come from running each problem's correct solution here; every problem
also carries a wrong solution (in `info["solutions"]`, which the environment never shows the
model) so the tests can check both verdicts.

    uv run python environments/i3-code/scripts/make_sample.py
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from verifiers.testing import write_jsonl

OUT = Path(__file__).resolve().parents[1] / "i3_code" / "data" / "sample.jsonl"
rng = random.Random(20261129)


def stdin_outputs(code: str, inputs: list[str]) -> list[str]:
    outs = []
    for text in inputs:
        r = subprocess.run(
            [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=30
        )
        if r.returncode != 0:
            raise SystemExit(f"reference solution failed on {text!r}: {r.stderr}")
        outs.append(r.stdout)
    return outs


def call_outputs(code: str, fn: str, inputs: list[list]) -> list:
    ns: dict = {}
    exec(code, ns)  # our own reference solutions, at generation time only
    target = ns["Solution"]() if "Solution" in ns else None
    f = getattr(target, fn) if target is not None else ns[fn]
    outs = []
    for args in inputs:
        value = f(*json.loads(json.dumps(args)))
        outs.append(json.loads(json.dumps(value)))
    return outs


PROBLEMS: list[dict] = []


def problem(
    question, correct, wrong, inputs, fn=None, source="self-written", rate=0.5, as_lines=False
):
    if fn is None:
        outputs = stdin_outputs(correct, inputs)
        stored_inputs = inputs
    else:
        outputs = call_outputs(correct, fn, inputs)
        # function-call inputs: a list of positional arguments, or (as_lines) one JSON
        # literal per line, both forms appear in the real data
        stored_inputs = (
            ["\n".join(json.dumps(a) for a in args) for args in inputs] if as_lines else inputs
        )
    tests = {"inputs": stored_inputs, "outputs": outputs, "fn_name": fn}
    info = {
        "tests": json.dumps(tests),
        "source": source,
        "solutions": {"correct": correct, "wrong": wrong},
    }
    PROBLEMS.append(
        {"question": question, "info": json.dumps(info), "avg@8_qwen3_4b_instruct_2507": rate}
    )


# 1. stdin, two integers
problem(
    "Read two integers a and b separated by a space and print their sum.\n\n"
    "Input: one line `a b` (-10^9 <= a, b <= 10^9).\nOutput: a + b.",
    "a, b = map(int, input().split())\nprint(a + b)\n",
    "a, b = map(int, input().split())\nprint(a - b)\n",
    ["1 2\n", "-5 5\n", "1000000000 1000000000\n", "0 0\n", "7 -3\n"],
    rate=0.875,
)
# 2. stdin, float output (tolerance 1e-3)
problem(
    "The first line holds n, the second n integers. Print their mean with at least 4 digits "
    "after the decimal point. Answers within 1e-3 of the exact value are accepted.",
    "n = int(input())\nxs = list(map(int, input().split()))\nprint(f'{sum(xs) / n:.6f}')\n",
    "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs) // n)\n",
    ["3\n1 2 4\n", "2\n1 2\n", "4\n-1 -2 -3 -5\n", "1\n10\n", "5\n1 1 1 1 2\n"],
    rate=0.625,
)
# 3. stdin, several output lines, whitespace-tolerant
problem(
    "Given t lines of text (t on the first line), print for each line the number of vowels "
    "(a, e, i, o, u, either case) it contains, one count per line.",
    "t = int(input())\nfor _ in range(t):\n    s = input()\n"
    "    print(sum(c in 'aeiouAEIOU' for c in s))\n",
    "t = int(input())\nfor _ in range(t):\n    s = input()\n    print(sum(c in 'aeiou' for c in s))\n",
    ["2\nhello world\nAEIOU\n", "1\nxyz\n", "3\nOpen Door\nsky\nQueue\n"],
    rate=0.75,
)
# 4. stdin, reverse words
problem(
    "Read one line of words separated by single spaces and print the words in reverse order.",
    "print(' '.join(input().split()[::-1]))\n",
    "print(input()[::-1])\n",
    ["one two three\n", "a\n", "the quick brown fox\n", "x y\n"],
    rate=0.9,
)
# 5. stdin, primes up to n; 20 tests (more than the 15 graded)
problem(
    "Read n (1 <= n <= 200000) and print how many primes p satisfy p <= n.",
    "n = int(input())\nsieve = bytearray([1]) * (n + 1)\nsieve[0:2] = b'\\x00\\x00'[: n + 1]\n"
    "for i in range(2, int(n ** 0.5) + 1):\n    if sieve[i]:\n"
    "        sieve[i * i :: i] = bytearray(len(range(i * i, n + 1, i)))\nprint(sum(sieve))\n",
    "n = int(input())\nprint(sum(all(p % d for d in range(2, p)) for p in range(2, n)))\n",
    [
        f"{n}\n"
        for n in [1, 2, 3, 4, 5, 7, 10, 11, 13, 17, 19, 20, 23, 29, 30, 31, 97, 100, 101, 1000]
    ],
    rate=0.5,
)
# 6. stdin, maximum subarray; 20 tests
_arrays = [[rng.randint(-50, 50) for _ in range(rng.randint(1, 12))] for _ in range(17)]
_arrays += [[-3, -1, -2], [-7], [5, -9, 6]]
problem(
    "Given n and an array of n integers, print the largest sum of a non-empty contiguous subarray.",
    "n = int(input())\nxs = list(map(int, input().split()))\nbest = cur = xs[0]\n"
    "for x in xs[1:]:\n    cur = max(x, cur + x)\n    best = max(best, cur)\nprint(best)\n",
    # wrong when every element is negative (answers 0)
    "n = int(input())\nxs = list(map(int, input().split()))\nbest = cur = 0\nfor x in xs:\n"
    "    cur = max(0, cur + x)\n    best = max(best, cur)\nprint(best)\n",
    [f"{len(a)}\n{' '.join(map(str, a))}\n" for a in _arrays],
    rate=0.375,
)
# 7. function call, LeetCode-style class
_two_sum_cases = [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[3, 3], 6], [[1, 5, 8, 13], 21]]
problem(
    "Complete `class Solution` with a method `twoSum(self, nums: List[int], target: int) -> "
    "List[int]` returning the indices (ascending) of the two numbers that add up to target. "
    "Exactly one answer exists.",
    "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
    "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    "                return [seen[target - x], i]\n            seen[x] = i\n",
    "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
    "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    "                return [i, seen[target - x]]\n            seen[x] = i\n",
    _two_sum_cases,
    fn="twoSum",
    rate=0.8,
)
# 8. function call, plain function returning a bool
problem(
    "Write `is_palindrome(s: str) -> bool`: whether s reads the same backwards, ignoring case "
    "and every character that is not a letter or digit.",
    "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n",
    "def is_palindrome(s):\n    return s == s[::-1]\n",
    [["Racecar"], ["A man, a plan, a canal: Panama"], ["abc"], [""], ["No lemon, no melon"]],
    fn="is_palindrome",
    rate=0.7,
)
# 9. function call returning a tuple (compared as a list)
problem(
    "Write `min_max(nums: List[int]) -> Tuple[int, int]` returning the smallest and the largest "
    "element.",
    "def min_max(nums):\n    return (min(nums), max(nums))\n",
    "def min_max(nums):\n    return (max(nums), min(nums))\n",
    [[[3, 1, 2]], [[5]], [[-1, -8, 4, 4]]],
    fn="min_max",
    rate=0.95,
)
# 10. function call, arguments as JSON lines
problem(
    "Write `rotate(nums: List[int], k: int) -> List[int]` returning nums rotated right by k "
    "steps (k >= 0 may exceed the length).",
    "def rotate(nums, k):\n    if not nums:\n        return []\n    k %= len(nums)\n"
    "    return nums[-k:] + nums[:-k] if k else list(nums)\n",
    "def rotate(nums, k):\n    return nums[k:] + nums[:k]\n",
    [[[1, 2, 3, 4, 5], 2], [[1, 2], 3], [[], 1], [[9, 8, 7], 0]],
    fn="rotate",
    as_lines=True,
    rate=0.6,
)
# 11. stdin, grid paths; the wrong solution is exponential (times out on the large tests)
problem(
    "Count the monotone lattice paths from (0, 0) to (r, c) moving only right or up, modulo "
    "1000000007. Input: `r c` (0 <= r, c <= 1000).",
    "r, c = map(int, input().split())\nM = 10**9 + 7\nrow = [1] * (c + 1)\n"
    "for _ in range(r):\n    for j in range(1, c + 1):\n        row[j] = (row[j] + row[j - 1]) % M\n"
    "print(row[c])\n",
    "import sys\nsys.setrecursionlimit(10000)\nr, c = map(int, input().split())\n"
    "def f(i, j):\n    return 1 if i == 0 or j == 0 else (f(i - 1, j) + f(i, j - 1))\n"
    "print(f(r, c) % (10**9 + 7))\n",
    [f"{r} {c}\n" for r, c in [(0, 0), (1, 1), (2, 2), (3, 5), (16, 16), (1000, 1000)]],
    rate=0.25,
)
# 12. stdin, numeric sort (the wrong one sorts as strings)
problem(
    "Read n and n integers and print them in non-decreasing order on one line.",
    "n = int(input())\nprint(*sorted(map(int, input().split())))\n",
    "n = int(input())\nprint(*sorted(input().split()))\n",
    ["3\n10 9 100\n", "4\n5 3 3 1\n", "1\n42\n", "5\n-1 -10 2 20 0\n"],
    rate=0.85,
)


def main() -> None:
    write_jsonl(OUT, PROBLEMS)
    print(f"wrote {len(PROBLEMS)} problems to {OUT}")


if __name__ == "__main__":
    main()
