"""Web of lies: people who always tell the truth or always lie; say whether each one asked is honest.

SynLogic's layout: the prompt lists clues (where each person is, some people's honesty stated
outright, "X says Y lies / tells the truth", irrelevant remarks) and asks about several people
in turn; the reply ends with ``The answer is **yes, no, yes**.``. The game data's ``answer``
holds the truth, one ``yes``/``no`` per question in order (``是``/``否`` in Chinese rows);
``metadata`` keeps the people (``id``, ``name``, ``location``, ``is_truth_teller``,
``is_target``, ``has_truth_narration``, ``statements`` with ``speaker_id``/``target_id``), the
clue texts and the enumerated solutions.

The reply's list must have one yes/no per question, in order (``true``/``false`` and
``是``/``否`` read as yes/no, like upstream); anything else in the list is not an answer.
Upstream also fell back to the last run of yes/no words anywhere in the reply; here the answer
is the final answer block (``The answer is ...``, ``\\boxed{}``, ``<answer>`` tags) or, for the
Chinese prompts, the rest of the line after the last ``答案是``.

Generated puzzles (levels 1-3: 4 people and 2 questions / 6 and 3 / 9 and 4) use the same
layout, and the asked people's honesty is forced by the clues (checked by enumeration).
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

from i3_logic.answers import answer_block
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    MAX_ANSWER_CHARS,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    trace_id,
)

NAME = "web_of_lies"
ALIASES = ()
LEVELS = {1: (4, 2), 2: (6, 3), 3: (9, 4)}  # people, people asked about
NAMES = (
    "Amara Bruno Celia Dario Elif Farid Greta Hugo Ines Jonas Kemal Lena Mateo Nadia Oskar "
    "Priya Quentin Rosa Samir Tove Umar Vera Wren Ximena Yusuf Zora"
).split()
PLACES = (
    "bakery|harbor|library|observatory|orchard|pier|post office|quarry|ski lodge|subway stop|"
    "tea house|vineyard|windmill|workshop|boathouse|campsite|clinic|gallery"
).split("|")

_YES = {"yes", "true", "是"}
_NO = {"no", "false", "否"}
_SPLIT = re.compile(r"[\s,，、;；]+")


def _truths(text: str) -> list[bool] | None:
    """One bool per item of a yes/no list, or None when any item is not yes or no."""
    items = [w.strip("*_`'\".。!") for w in _SPLIT.split(text.strip())]
    items = [w.lower() for w in items if w and w.lower() != "and"]  # "yes, no, and yes"
    if not items or any(w not in _YES | _NO for w in items):
        return None
    return [w in _YES for w in items]


def expected(puzzle: Puzzle) -> list[bool]:
    truths = _truths(puzzle.answer)
    if truths is None:
        raise PuzzleDataError(f"{NAME} answer must be a list of yes/no, got {puzzle.answer!r}")
    return truths


def check(puzzle: Puzzle) -> None:
    truths = expected(puzzle)
    meta = puzzle.metadata
    people = meta.get("people")
    if people is not None:
        if not isinstance(people, list) or not all(isinstance(p, dict) for p in people):
            raise PuzzleDataError(f"{NAME} metadata 'people' must be a list of objects")
        targets = [p for p in people if p.get("is_target")]
        if targets and len(targets) != len(truths):
            raise PuzzleDataError(
                f"{NAME}: {len(targets)} people asked about but {len(truths)} answers stored"
            )
    solutions = meta.get("all_possible_solutions")
    if isinstance(solutions, list) and len(solutions) == 1 and isinstance(solutions[0], dict):
        if list(solutions[0].values()) != truths:
            raise PuzzleDataError(f"{NAME}: the stored answer disagrees with the solution")


# The Chinese prompts end "答案是 **是，否，是**。"; the shared reader knows only English labels.
_CHINESE_LABEL = re.compile(r"答案是\s*[：:=]?\s*(.+?)\s*$", re.DOTALL)


def answer_list(text: str) -> str:
    """The final answer block, or the text after the last "答案是" (its line, bold removed)."""
    try:
        return answer_block(text)
    except AnswerError:
        pass
    at = (text or "").rfind("答案是")
    m = _CHINESE_LABEL.match(text[at:]) if at >= 0 else None
    if not m or "\n" in m[1] or len(m[1]) > MAX_ANSWER_CHARS:
        raise AnswerError("no final answer block")
    return m[1].strip("*。. ")


def verify(puzzle: Puzzle, text: str) -> float:
    truth = expected(puzzle)
    given = _truths(answer_list(text))
    return 1.0 if given == truth else 0.0


# -- generator -----------------------------------------------------------------------------------
def _consistent(people: list[dict[str, Any]], honest: dict[int, bool]) -> bool:
    """Whether an honesty assignment agrees with every statement (as stated in the clues)."""
    for p in people:
        speaker = honest[p["id"]]
        for s in p["statements"]:
            # The clue says "target tells the truth" exactly when that claim was made.
            claim = people[s["target_id"]]["is_truth_teller"] == p["is_truth_teller"]
            if (honest[s["target_id"]] == speaker) != claim:
                return False
    return True


def _solutions(people: list[dict[str, Any]], targets: list[int]) -> dict[tuple[bool, ...], int]:
    """Target honesty tuples over all assignments consistent with the clues (narrated fixed)."""
    free = [p["id"] for p in people if not p["has_truth_narration"]]
    found: dict[tuple[bool, ...], int] = {}
    for values in itertools.product((True, False), repeat=len(free)):
        honest = {p["id"]: p["is_truth_teller"] for p in people if p["has_truth_narration"]}
        honest.update(zip(free, values, strict=True))
        if _consistent(people, honest):
            key = tuple(honest[t] for t in targets)
            found[key] = found.get(key, 0) + 1
    return found


def _ref(rng: random.Random, person: dict[str, Any]) -> str:
    return f"the person at the {person['location']}" if rng.random() < 0.7 else person["name"]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _build(rng: random.Random, count: int, asked: int) -> tuple[list[dict[str, Any]], list[int]]:
    names = rng.sample(NAMES, count)
    places = rng.sample(PLACES, count)
    people: list[dict[str, Any]] = [
        {
            "id": i,
            "name": names[i],
            "location": places[i],
            "is_truth_teller": rng.random() < 0.5,
            "is_target": False,
            "has_truth_narration": False,
            "statements": [],
        }
        for i in range(count)
    ]
    targets = rng.sample(range(count), asked)
    for t in targets:
        people[t]["is_target"] = True
    others = [i for i in range(count) if i not in targets]
    for i in rng.sample(others, rng.randint(1, max(1, len(others) // 2))):
        people[i]["has_truth_narration"] = True
    for p in people:
        for target in rng.sample([j for j in range(count) if j != p["id"]], rng.randint(1, 2)):
            p["statements"].append({"type": "simple", "speaker_id": p["id"], "target_id": target})
    return people, targets


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    count, asked = LEVELS[difficulty]
    while True:
        people, targets = _build(rng, count, asked)
        solutions = _solutions(people, targets)
        if len(solutions) == 1:
            break
    clues = [f"{p['name']} is at the {p['location']}." for p in people]
    for p in people:
        if p["has_truth_narration"]:
            said = "tells the truth" if p["is_truth_teller"] else "lies"
            clues.append(f"{_cap(_ref(rng, p))} {said}.")
        for s in p["statements"]:
            target = people[s["target_id"]]
            says_honest = target["is_truth_teller"] == p["is_truth_teller"]
            clues.append(
                f"{_cap(_ref(rng, p))} says {_ref(rng, target)} "
                f"{'tells the truth' if says_honest else 'lies'}."
            )
    clues.append(f"{rng.choice(people)['name']} has a collection of old maps.")
    rng.shuffle(clues)
    refs = [_ref(rng, people[t]) for t in targets]
    answer = ", ".join("yes" if people[t]["is_truth_teller"] else "no" for t in targets)
    question = (
        "In this puzzle each person either always tells the truth or always lies, and each "
        f"person is at a different place.\nClues: {' '.join(clues)}\nQuestions: "
        + " ".join(f"Does {r} tell the truth?" for r in refs)
        + "\nAnswer with one yes or no per question, in order, as a comma-separated list "
        f"(for example: yes, no, yes).\n{ANSWER_INSTRUCTION}"
    )
    metadata = {
        "trace_id": trace_id(rng, version=None),
        "num_person": count,
        "difficulty": difficulty,
        "people": people,
        "statements": clues,
        "use_chinese": False,
        "all_possible_solutions": [
            {people[t]["name"]: people[t]["is_truth_teller"] for t in targets}
        ],
        "valid_solutions": {",".join(str(v) for v in k): n for k, n in solutions.items()},
    }
    return Puzzle(NAME, question, answer, difficulty, metadata)
