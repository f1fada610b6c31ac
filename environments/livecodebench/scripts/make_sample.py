"""Regenerate livecodebench/data/sample.jsonl: self-written problems (not benchmark items) in the
`code_generation_lite` row layout, plus the `version` column the loader adds (the release file a
row comes from). Expected outputs come from running each problem's correct solution here; some
rows store their private tests in the benchmark's compressed form (base64(zlib(pickle(JSON))))
so the decoder is exercised. Each row's `metadata` also carries a correct and a wrong solution
for the tests (the environment never shows them to the model).

    uv run python environments/livecodebench/scripts/make_sample.py
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from livecodebench import encode_private_tests

from verifiers.testing import write_jsonl

OUT = Path(__file__).resolve().parents[1] / "livecodebench" / "data" / "sample.jsonl"
rng = random.Random(1129)
ROWS: list[dict] = []


def run_stdin(code: str, text: str) -> str:
    r = subprocess.run(
        [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=30
    )
    if r.returncode != 0:
        raise SystemExit(f"reference failed on {text!r}: {r.stderr}")
    return r.stdout


def run_call(code: str, fn: str, text: str) -> str:
    ns: dict = {}
    exec(code, ns)  # our own reference solutions, at generation time only
    args = [json.loads(line) for line in text.splitlines()]
    return json.dumps(getattr(ns["Solution"](), fn)(*args))


def add(
    qid, title, platform, day, version, difficulty, content, correct, wrong, inputs,
    n_public=2, fn=None, starter="", compressed=False,
):  # fmt: skip
    tests = []
    for text in inputs:
        out = run_call(correct, fn, text) if fn else run_stdin(correct, text)
        tests.append({"input": text, "output": out, "testtype": "functional" if fn else "stdin"})
    public, private = tests[:n_public], tests[n_public:]
    meta = {"solutions": {"correct": correct, "wrong": wrong}}
    if fn:
        meta["func_name"] = fn
    ROWS.append(
        {
            "question_title": title,
            "question_content": content,
            "platform": platform,
            "question_id": qid,
            "contest_id": qid.rsplit("_", 1)[0],
            "contest_date": f"{day}T00:00:00",
            "starter_code": starter,
            "difficulty": difficulty,
            "public_test_cases": json.dumps(public),
            "private_test_cases": encode_private_tests(private)
            if compressed
            else json.dumps(private),
            "metadata": json.dumps(meta),
            "version": version,
        }
    )


add(
    "sx101_a", "Count ab", "atcoder", "2024-10-12", "v5", "easy",
    "You are given N and a string S of length N. Print how many indices i have S[i] = 'a' and "
    "S[i+1] = 'b'.",
    "n = int(input())\ns = input()\nprint(sum(s[i:i + 2] == 'ab' for i in range(n - 1)))\n",
    "n = int(input())\ns = input()\nprint(s.count('a'))\n",
    ["4\nabab\n", "3\nbba\n", "5\naabbb\n", "1\na\n", "6\nababab\n"],
)  # fmt: skip
add(
    "sx102_b", "Fewest Coins", "atcoder", "2025-02-08", "v6", "medium",
    "Coins have values 1, 5, 10, 50, 100 and 500. Print the fewest coins that sum to X "
    "(0 <= X <= 10^9).",
    "x = int(input())\nc = 0\nfor v in (500, 100, 50, 10, 5, 1):\n    c += x // v\n    x %= v\nprint(c)\n",
    "x = int(input())\nprint(x // 500 + x % 500)\n",
    ["0\n", "7\n", "499\n", "1000000000\n", "655\n", "1\n", "999\n"],
    compressed=True,
)  # fmt: skip
add(
    "sx103_a", "Digit Sum", "codeforces", "2024-08-15", "v4", "easy",
    "Given a positive integer N with up to 10^5 digits, print the sum of its digits.",
    "print(sum(map(int, input().strip())))\n",
    "print(int(input()) % 9)\n",
    ["123\n", "9\n", "99999999999999999999\n", "1000000\n"],
)  # fmt: skip
add(
    "sx104_c", "Half Area", "atcoder", "2024-12-21", "v5", "medium",
    "Given the legs a and b of a right triangle (integers), print its area exactly, as a "
    "decimal with one digit after the point.",
    "a, b = map(int, input().split())\nprint(f'{a * b / 2:.1f}')\n",
    "a, b = map(int, input().split())\nprint(a * b // 2)\n",
    ["1 1\n", "3 4\n", "5 7\n", "2 2\n"],
)  # fmt: skip
add(
    "sx105_d", "Longest Increasing", "codeforces", "2025-04-19", "v6", "hard",
    "Given N and a sequence of N integers, print the length of its longest strictly increasing "
    "subsequence (N <= 2 * 10^5).",
    "import bisect\nn = int(input())\ntails = []\nfor x in map(int, input().split()):\n"
    "    i = bisect.bisect_left(tails, x)\n    tails[i:i + 1] = [x]\nprint(len(tails))\n",
    # counts increasing adjacent runs instead
    "n = int(input())\nxs = list(map(int, input().split()))\nbest = cur = 1\n"
    "for a, b in zip(xs, xs[1:]):\n    cur = cur + 1 if b > a else 1\n    best = max(best, cur)\nprint(best)\n",
    [
        "5\n1 2 3 4 5\n", "6\n3 1 4 1 5 9\n",
        *(f"12\n{' '.join(str(rng.randint(1, 30)) for _ in range(12))}\n" for _ in range(6)),
    ],
    compressed=True,
)  # fmt: skip
add(
    "sx001_a", "Old Echo", "atcoder", "2023-06-03", "v1", "easy",
    "Read a line and print it twice, separated by a space.",
    "s = input()\nprint(s, s)\n",
    "print(input())\n",
    ["hi\n", "x y\n"],
    n_public=1,
)  # fmt: skip
add(
    "lc2001", "Best Time To Trade", "leetcode", "2024-11-02", "v5", "easy",
    "Given prices[i], the price of a stock on day i, return the largest profit from one buy "
    "followed by one later sell (0 if no profit is possible).",
    "class Solution:\n    def maxProfit(self, prices):\n        best, low = 0, float('inf')\n"
    "        for p in prices:\n            low = min(low, p)\n            best = max(best, p - low)\n"
    "        return best\n",
    "class Solution:\n    def maxProfit(self, prices):\n        return max(prices) - min(prices)\n",
    ["[7,1,5,3,6,4]", "[7,6,4,3,1]", "[2,4,1]", "[1]", "[3,3,5,0,0,3,1,4]"],
    fn="maxProfit",
    starter="class Solution:\n    def maxProfit(self, prices: List[int]) -> int:\n        ",
)  # fmt: skip
add(
    "lc2002", "Divisible Pairs", "leetcode", "2025-01-18", "v6", "medium",
    "Given an integer array nums and an integer k, return the number of pairs i < j with "
    "(nums[i] + nums[j]) divisible by k.",
    "class Solution:\n    def countPairs(self, nums, k):\n        seen = {}\n        c = 0\n"
    "        for x in nums:\n            c += seen.get((-x) % k, 0)\n            seen[x % k] = seen.get(x % k, 0) + 1\n"
    "        return c\n",
    "class Solution:\n    def countPairs(self, nums, k):\n"
    "        return sum((nums[i] + nums[j]) % k == 0 for i in range(len(nums)) for j in range(i, len(nums)))\n",
    ["[1,2,3,4,5]\n3", "[2,2,2]\n2", "[5]\n5", "[1,9,3,7]\n10", "[0,0,0,0]\n1", "[4,8,12,3]\n4"],
    fn="countPairs",
    starter="class Solution:\n    def countPairs(self, nums: List[int], k: int) -> int:\n        ",
    compressed=True,
)  # fmt: skip
add(
    "lc2003", "Squares In Order", "leetcode", "2024-09-07", "v4", "easy",
    "Given nums sorted in non-decreasing order, return the squares of its elements, also sorted "
    "in non-decreasing order.",
    "class Solution:\n    def sortedSquares(self, nums):\n        return sorted(x * x for x in nums)\n",
    "class Solution:\n    def sortedSquares(self, nums):\n        return [x * x for x in nums]\n",
    ["[-4,-1,0,3,10]", "[1,2,3]", "[-7,-3,2,3,11]", "[0]"],
    fn="sortedSquares",
    starter="class Solution:\n    def sortedSquares(self, nums: List[int]) -> List[int]:\n        ",
)  # fmt: skip
add(
    "lc1001", "Single Element", "leetcode", "2024-03-16", "v1", "easy",
    "Every element of nums appears twice except one. Return that one.",
    "class Solution:\n    def singleNumber(self, nums):\n        r = 0\n        for x in nums:\n"
    "            r ^= x\n        return r\n",
    "class Solution:\n    def singleNumber(self, nums):\n        return nums[0]\n",
    ["[2,2,1]", "[4,1,2,1,2]", "[1]"],
    fn="singleNumber",
    starter="class Solution:\n    def singleNumber(self, nums: List[int]) -> int:\n        ",
    n_public=1,
)  # fmt: skip


def main() -> None:
    write_jsonl(OUT, ROWS)
    print(f"wrote {len(ROWS)} problems to {OUT}")


if __name__ == "__main__":
    main()
