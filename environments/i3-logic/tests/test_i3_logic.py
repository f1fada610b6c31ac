"""i3-logic: generators, verifiers (grading tables), bad input, loading, and a vf-eval run."""

from __future__ import annotations

import json
import logging
import math
import re
import zlib
from pathlib import Path
from statistics import mean

import i3_logic
import orjson
import pytest
from i3_logic import (
    LogicParser,
    Puzzle,
    generate,
    generate_rows,
    load_environment,
    verify,
)
from i3_logic.families.sudoku import count_solutions
from i3_logic_testkit import MINES, metadata_puzzle

import verifiers as vf

PACKAGE = Path(i3_logic.__file__).parent
LEVELS = (1, 2, 3)


def tagged(text: str) -> str:
    return f"<answer>{text}</answer>"


def reply(text: str) -> str:
    """A model reply as the reward sees it: reasoning stripped by the environment's parser."""
    return LogicParser().parse(text)


# -- every family: its own solution verifies, corruptions do not -----------------------------
@pytest.mark.parametrize("family", sorted(i3_logic.GENERATED))
@pytest.mark.parametrize("lvl", LEVELS)
def test_generated_solution_verifies(family, lvl):
    for index in range(4):
        puzzle = generate(family, 11, lvl, index)
        assert puzzle.task == family and puzzle.difficulty == lvl
        assert "<answer></answer>" in puzzle.question
        assert verify(puzzle, tagged(puzzle.answer)) == 1.0
        # The stored record round-trips through the dataset's JSON form.
        again = Puzzle.from_game_data(family, puzzle.game_data_str())
        assert verify(again, reply(f"<think>let me see</think>\n{tagged(puzzle.answer)}")) == 1.0


@pytest.mark.parametrize("family", sorted(i3_logic.GENERATED))
def test_wrong_and_malformed_answers_score_zero(family):
    puzzle = generate(family, 3, 2, 0)
    sol = puzzle.answer
    wrong = [
        "",
        "I am not sure.",
        "<answer></answer>",
        f"<answer>{sol}",  # never closed
        tagged(sol + " 0"),  # an extra token
        tagged("[[[[[[[[[[[["),
        tagged("9" * 5000),
        tagged("__import__('os').system('echo hacked')"),
        f"{tagged(sol)} then again {tagged('no')}",  # the last block counts
        reply(f"<think>{tagged(sol)}"),  # reasoning never closed: no answer
    ]
    for text in wrong:
        assert verify(puzzle, text) == 0.0, text[:80]
    # Template that injects <think> into the prompt: the completion holds only </think>.
    assert verify(puzzle, reply(f"reasoning...</think>{tagged(sol)}")) == 1.0
    assert verify(puzzle, f"{tagged('no')} on second thought {tagged(sol)}") == 1.0


# -- grading tables: hand-written puzzles with known-right and known-wrong answers -------------
G24 = metadata_puzzle("game_of_24", numbers=[5, 7, 8, 9], result=24, operators=["+", "-", "*", "/"])
G24_DIV = metadata_puzzle("mathador", numbers=[3, 3, 8, 8], result=24)
SUDOKU = metadata_puzzle("sudoku", original_sudoku=[[1, 0, 0, 0], [0] * 4, [0] * 4, [0] * 4])
DYCK = metadata_puzzle(
    "dyck_language", question_sequence="([{}(<", full_sequence="([{}(<>)])"
)  # open: ( [ ( <
# Boolean expressions (SynLogic: the labels of the true options; no metadata).
BOOL = Puzzle("boolean_expressions", "q", "A,C", 1, {})
WORDS = metadata_puzzle(
    "word_sorting",
    words=["pear", "apple", "fig", "banana"],
    sorted_words=["apple", "banana", "fig", "pear"],
    front_letters="x",  # in none of the words: the usual order
    order=1,
)
SEND = metadata_puzzle("cryptarithm", letter_words=["SEND", "MORE", "MONEY"], operators=["+"])
ABCD = metadata_puzzle("cryptarithm", letter_words=["AB", "CD", "EF"], operators=["+"])
# SynLogic's layout: the prefilled values are read from the question's grid.
FUTO = Puzzle(
    "futoshiki",
    "Current puzzle:\n1 X X\nX X X\nX X X\n\nInequality constraints:\n(1,2) < (1,3)",
    "",
    1,
    {"grid_size": 3, "prefilled_coords": [[0, 0]], "constraints": [[[0, 1], [0, 2], "<"]]},
)
SKY = metadata_puzzle(
    "skyscraper_puzzle", n=3, top=[3, 2, 1], bottom=[1, 2, 2], left=[3, 2, 1], right=[1, 2, 2]
)
SKY_ONE = metadata_puzzle(  # the clues of LATIN_B (SynLogic gives every clue)
    "skyscraper_puzzle", n=3, top=[2, 1, 2], bottom=[2, 3, 1], left=[2, 1, 2], right=[2, 3, 1]
)
KUKU = metadata_puzzle("kukurasu", row_sums=[4, 2], col_sums=[1, 2, 1])
# Amara is honest; Bruno says she lies (so he lies); Celia says Bruno is honest (so she lies).
# Web of lies (SynLogic: one yes/no per person asked, in order).
LIES = Puzzle("web_of_lies", "q", "no, yes", 1, {})
LIES_2 = Puzzle("web_of_lies", "q", "yes", 1, {})
STARS = metadata_puzzle(
    "star_placement_puzzle", n=4, k=1, region_grid=[list(r) for r in "AABB AABB CCDD CCDD".split()]
)
STARS_BAD = metadata_puzzle(
    "star_placement_puzzle", n=4, k=1, region_grid=[list(r) for r in "AAAA AAAA BBCC BDDD".split()]
)
LATIN_A = "1 2 3\n2 3 1\n3 1 2"
LATIN_B = "1 3 2\n3 2 1\n2 1 3"

GRADING = [
    # Game of 24 / mathador: exact value, every number exactly once, no eval.
    (G24, "8 * (5 + 7 - 9)", 1.0),
    (G24, "(8 * ((5 + 7) - 9))", 1.0),
    (G24, "8 × (5 + 7 − 9)", 1.0),
    (G24, "8 * (5 + 7 - 9) = 24", 1.0),
    (G24, "\\boxed{8 \\times (5 + 7 - 9)}", 1.0),
    (G24, "(5 + 7) * (9 - 8)", 0.0),  # right numbers, value 12: the upstream SynLogic bug
    (G24, "(5 + 7) * (9 - 8) = 24", 0.0),  # claims 24, is 12
    (G24, "8 * (5 + 7 - 9) = 25", 0.0),
    (G24, "5 + 7 + 8 + 9", 0.0),
    (G24, "8 * 3", 0.0),  # numbers not the given ones
    (G24, "8 * (5 + 7 - 9) + 0", 0.0),  # an extra number
    (G24, "8 * (5 + 7 - 9) * 1 * 1", 0.0),
    (G24, "(9 - 7) * 8 + 8", 0.0),  # 8 used twice, 5 missing
    (G24, "8 * (57 - 9) / 16", 0.0),  # digits joined
    (G24, "-8 * -(5 + 7 - 9)", 0.0),  # unary minus is not an operation here
    (G24, "8 ** (5 + 7 - 9)", 0.0),
    (G24, "9**9**9", 0.0),
    (G24, "8 * (5 + 7 - 9", 0.0),
    (G24, "24", 0.0),
    (G24, "eight times three", 0.0),
    (G24_DIV, "8 / (3 - 8 / 3)", 1.0),  # exact fractions: 23.999... in floats
    (G24_DIV, "8 / 3 - 8 / 3 + 24", 0.0),
    # Sudoku (4x4, one clue at the top-left).
    (SUDOKU, "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1", 1.0),
    (SUDOKU, "[[1, 2, 3, 4], [3, 4, 1, 2], [2, 1, 4, 3], [4, 3, 2, 1]]", 1.0),
    (SUDOKU, "2 1 3 4\n3 4 2 1\n1 2 4 3\n4 3 1 2", 0.0),  # valid, contradicts the clue
    (SUDOKU, "1 2 3 4\n3 4 2 1\n2 1 4 3\n4 3 2 1", 0.0),  # two cells swapped
    (SUDOKU, "1 2 3 4\n2 3 4 1\n3 4 1 2\n4 1 2 3", 0.0),  # rows and columns fine, boxes not
    (SUDOKU, "1 2 3 4 3 4 1 2 2 1 4 3 4 3 2 1", 0.0),  # one line
    # Dyck language.
    (DYCK, "> ) ] )", 1.0),
    (DYCK, ">)])", 1.0),
    (DYCK, "> ) ]", 0.0),
    (DYCK, "> ) ] ) )", 0.0),
    (DYCK, ") ] ) >", 0.0),
    (DYCK, "( [ { } ( < > ) ] )", 1.0),  # the whole completed sequence answers it too
    # Boolean expressions.
    (BOOL, "A,C", 1.0),
    (BOOL, "C, a", 1.0),
    (BOOL, "**A, C**", 1.0),
    (BOOL, "A", 0.0),
    (BOOL, "A,C,D", 0.0),
    (BOOL, "A, A, C", 0.0),  # upstream's letter set accepted this
    (BOOL, "AC", 0.0),
    (BOOL, "A and C or D", 0.0),
    # Word sorting.
    (WORDS, "apple banana fig pear", 1.0),
    (WORDS, "apple, banana, fig, pear", 1.0),
    (WORDS, "Apple Banana Fig Pear", 1.0),
    (WORDS, "apple fig banana pear", 0.0),
    (WORDS, "apple banana fig", 0.0),
    (WORDS, "apple banana fig pear pear", 0.0),
    # Cryptarithm: any consistent assignment counts.
    (SEND, "9567 + 1085 = 10652", 1.0),
    (SEND, "9567 + 1085 = 10653", 0.0),  # consistent letters, wrong sum
    (SEND, "9567 + 1085 = 10662", 0.0),  # E is 5 and 6
    (SEND, "9567+1085", 0.0),
    (ABCD, "18 + 25 = 43", 1.0),
    (ABCD, "18 + 25 = 43.", 1.0),
    (ABCD, "08 + 15 = 23", 0.0),  # leading zero
    (ABCD, "18 + 28 = 46", 0.0),  # B and D both 8
    (ABCD, "18 + 25 + 0 = 43", 0.0),
    # Minesweeper: 3x3, top-left and bottom-right hidden, cells from 0 (SynLogic).
    (MINES, "(0, 0)", 1.0),
    (MINES, "[(0, 0)]", 1.0),
    (MINES, "[[0, 0]]", 1.0),
    (MINES, "(2, 2)", 0.0),
    (MINES, "(0, 0), (2, 2)", 0.0),
    (MINES, "(0, 0), (0, 0)", 0.0),
    (MINES, "(0, 1)", 0.0),  # a revealed cell
    (MINES, "(1, 1)", 0.0),  # counted from 1
    (MINES, "(0, 0) maybe", 0.0),
    # Futoshiki 3x3: clue 1 at the top-left, R1C2 < R1C3.
    (FUTO, LATIN_A, 1.0),
    (FUTO, LATIN_B, 0.0),  # Latin and keeps the clue, breaks the inequality
    (FUTO, "1 2 3\n2 3 1\n3 2 1", 0.0),
    # Skyscrapers 3x3: the clues of LATIN_A, then of LATIN_B.
    (SKY, LATIN_A, 1.0),
    (SKY, LATIN_B, 0.0),
    (SKY_ONE, LATIN_B, 1.0),
    (SKY_ONE, LATIN_A, 0.0),
    # Kukurasu 2x3.
    (KUKU, "1 0 1\n0 1 0", 1.0),
    (KUKU, "1 0 1\n1 1 0", 0.0),
    (KUKU, "1 0 1\n0 2 0", 0.0),
    (KUKU, "1 0 1", 0.0),
    (KUKU, '[["1", "X", "1"], ["X", "1", "X"]]', 1.0),  # SynLogic's form
    # Star placement 4x4.
    (STARS, "(1, 2), (2, 4), (3, 1), (4, 3)", 1.0),
    (STARS, "[[1, 3], [2, 1], [3, 4], [4, 2]]", 1.0),  # the other valid placement
    (STARS, "(1, 2), (2, 3), (3, 1), (4, 4)", 0.0),  # (1, 2) and (2, 3) touch
    (STARS, "(1, 2), (2, 4), (3, 1)", 0.0),
    (STARS, "(1, 2), (1, 4), (3, 1), (4, 3)", 0.0),  # two in row 1
    (STARS, "(1, 2), (2, 4), (3, 1), (5, 3)", 0.0),
    (STARS_BAD, "(1, 2), (2, 4), (3, 1), (4, 3)", 0.0),  # two stars in region A
    # Web of lies.
    (LIES, "no, yes", 1.0),
    (LIES, "**No, Yes**", 1.0),
    (LIES_2, "Yes", 1.0),
    (LIES, "yes, no", 0.0),
    (LIES, "no", 0.0),
    (LIES, "no, yes, yes", 0.0),
    (LIES, "no, maybe yes", 0.0),
]


@pytest.mark.parametrize(("pz", "answer", "expected"), GRADING)
def test_grading_table(pz, answer, expected):
    assert verify(pz, tagged(answer)) == expected


def test_every_family_has_grading_rows():
    covered = {i3_logic.TASKS[pz.task].name for pz, _, _ in GRADING}
    assert covered == set(i3_logic.GENERATED)  # the other families: tests/rows, tests/families
    assert len(i3_logic.GENERATED) >= 10


def test_answer_forms_documented_in_prompts():
    pz = Puzzle("boolean_expressions", "q", "A", 1, {})
    assert verify(pz, "\\boxed{A}") == 1.0
    assert verify(pz, "```\nA\n```") == 1.0
    assert verify(pz, "The answer is **A**.") == 1.0
    assert verify(pz, "The final answer is: A") == 1.0
    assert verify(pz, "\\boxed{B} no wait <answer>$\\boxed{A}$</answer>") == 1.0
    assert verify(pz, "<answer>\\boxed{A} or \\boxed{B}</answer>") == 0.0
    crypt = metadata_puzzle("cryptarithm", letter_words=["AB", "CD", "EF"], operators=["+"])
    assert verify(crypt, "So the answer is 18 + 25 = 43.") == 1.0
    assert verify(pz, "A") == 0.0  # prose without an answer block
    assert verify(pz, "It is A, I think") == 0.0


def test_hostile_expressions_are_rejected_quickly():
    hostile = [
        "(" * 3000 + "1" + ")" * 3000,
        "1" + "+(1" * 90 + ")" * 90,
        "9" * 150 + " * " + "9" * 40,
        "8 / (5 - 5) * 7 * 9",
        "[" * 5000,
    ]
    for text in hostile:
        assert verify(G24, tagged(text)) == 0.0
        assert verify(generate("sudoku", 0, 1, 0), tagged(text)) == 0.0


# -- generators: determinism, difficulty, solvability ------------------------------------------
def test_same_seed_same_puzzles_different_seed_different():
    a = generate_rows(None, 3, "mixed", seed=5)
    assert a == generate_rows(None, 3, "mixed", seed=5)
    b = generate_rows(None, 3, "mixed", seed=6)
    for family in i3_logic.GENERATED:
        qa = [r["question"] for r in a if json.loads(r["info"])["task"] == family]
        qb = [r["question"] for r in b if json.loads(r["info"])["task"] == family]
        assert len(qa) == 3 and qa != qb, family
    # One family's puzzles do not depend on which other families are generated.
    only = generate_rows(["sudoku"], 3, "mixed", seed=5)
    assert only == [r for r in a if json.loads(r["info"])["task"] == "sudoku"]


SIZE = {
    "game_of_24": lambda m: len(m["numbers"]),
    "sudoku": lambda m: len(m["original_sudoku"]),
    "dyck_language": lambda m: len(m["question_sequence"]),
    "boolean_expressions": lambda m: len(" ".join(m["expressions"]).split()),
    "word_sorting": lambda m: len(m["words"]),
    "cryptarithm": lambda m: sum(map(len, m["letter_words"])),
    "minesweeper": lambda m: m["n"],
    "futoshiki": lambda m: m["grid_size"],
    "skyscraper_puzzle": lambda m: m["n"],
    "kukurasu": lambda m: len(m["row_sums"]),
    "web_of_lies": lambda m: len(m["people"]),
    "star_placement_puzzle": lambda m: m["n"],
}


@pytest.mark.parametrize("family", sorted(i3_logic.GENERATED))
def test_difficulty_changes_size(family):
    sizes = [
        mean(SIZE[family](generate(family, 1, lvl, i).metadata) for i in range(8)) for lvl in LEVELS
    ]
    assert sizes[0] < sizes[1] < sizes[2], sizes


@pytest.mark.parametrize("lvl", LEVELS)
def test_sudoku_puzzles_have_exactly_one_solution(lvl):
    for i in range(3):
        meta = generate("sudoku", 2, lvl, i).metadata
        grid = meta["original_sudoku"]
        box = {4: (2, 2), 6: (2, 3), 9: (3, 3)}[len(grid)]
        assert count_solutions(grid, *box) == 1
        assert any("X" in row for row in grid)  # something left to solve (SynLogic's blank)


def test_game_of_24_level_one_targets_24_and_all_levels_solvable():
    for lvl in LEVELS:
        for i in range(5):
            pz = generate("game_of_24", 9, lvl, i)
            assert (pz.metadata["result"] == 24) == (lvl == 1)
            assert verify(pz, tagged(pz.metadata["solutions"][0])) == 1.0


def test_minesweeper_hides_every_mine():
    for i in range(5):
        meta = generate("minesweeper", 4, 3, i).metadata
        assert meta["current_mines"]
        assert all(meta["revealed_grid"][r][c] == "X" for r, c in meta["current_mines"])
        assert all(meta["full_grid"][r][c] == "M" for r, c in meta["current_mines"])


def test_no_eval_or_exec_in_the_package():
    pattern = re.compile(r"(?<![\w.])(eval|exec|compile)\s*\(|literal_eval|__import__|\bpickle\b")
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) >= 13
    for path in sources:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            assert not pattern.search(line), f"{path.name}:{n}: {line.strip()}"


# -- loading rows: sample, filters, broken rows ----------------------------------------------
def test_difficulty_filter_and_family_filter_on_loaded_rows():
    all_rows = len(load_environment(source="sample").dataset)
    easy = load_environment(source="sample", min_avg_reward=0.6)
    assert 0 < len(easy.dataset) < all_rows
    assert all(r[i3_logic.DIFFICULTY_KEY] >= 0.6 for r in easy.dataset)
    only = load_environment(source="sample", families=["game_of_24"])
    tasks = {json.loads(r["info"])["task"] for r in only.dataset}
    assert tasks == {"game_of_24", "mathador", "game24"}  # tests/rows/game_of_24.jsonl


def row(task="sudoku", **info_overrides):
    pz = generate("sudoku", 0, 1, 0)
    info = {"task": task, "game_data_str": pz.game_data_str(), **info_overrides}
    return {"question": pz.question, "info": json.dumps(info)}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"question": "q", "info": "{not json"}, "row 1: info is not JSON"),
        ({"question": "q", "info": "[1]"}, "row 1: info must be an object"),
        (
            {"question": "q", "info": json.dumps({"game_data_str": "{}"})},
            "row 1: info has no 'task'",
        ),
        ({"question": "q", "info": json.dumps({"task": "sudoku"})}, "row 1 (sudoku): info of task"),
        (row(game_data_str=json.dumps({"metadata": {}})), "lacks original_sudoku"),
        (
            row(game_data_str=json.dumps({"metadata": {"original_sudoku": [[1, 2], [3]]}})),
            "grid size",
        ),
        (row(game_data_str="[1, 2"), "not JSON"),
        ({**row(), "question": ""}, "'question' must be non-empty"),
    ],
)
def test_broken_rows_fail_loudly(bad, message):
    with pytest.raises(vf.ConfigError, match=re.escape(message)):
        load_environment(source=[row(), bad, row()])


def test_unverifiable_rows_can_be_skipped_instead(caplog):
    bad = row(game_data_str=json.dumps({"metadata": {"original_sudoku": "53..7...."}}))
    with caplog.at_level(logging.WARNING, logger="i3_logic"):
        env = load_environment(source=[row(), bad, bad], invalid_rows="skip")
    assert len(env.dataset) == 1
    assert "sudoku (2)" in caplog.text and "row 1 (sudoku)" in caplog.text
    with pytest.raises(vf.ConfigError, match="2 unverifiable"):
        load_environment(source=[bad, bad], invalid_rows="skip")
    with pytest.raises(vf.ConfigError, match="row 0: info is not JSON"):
        load_environment(source=[{"question": "q", "info": "{"}], invalid_rows="skip")


def test_unknown_tasks_are_skipped_with_a_warning(caplog):
    unknown = {
        "question": "Which way does the river run?",
        "info": json.dumps({"task": "river_crossing", "game_data_str": "{}"}),
    }
    with caplog.at_level(logging.WARNING, logger="i3_logic"):
        env = load_environment(source=[unknown, row(), unknown])
    assert len(env.dataset) == 1
    assert "river_crossing (2)" in caplog.text
    with pytest.raises(vf.ConfigError, match="no rows left"):
        load_environment(source=[unknown])


def test_in_memory_rows_with_dict_info_and_a_local_file(tmp_path):
    pz = generate("word_sorting", 1, 1, 0)
    rows = [
        {"question": pz.question, "info": {"task": "word_sorting", "game_data": pz.game_data()}}
    ]
    env = load_environment(source=rows)
    assert i3_logic.puzzle_from_info(env.dataset[0]["info"]).metadata == pz.metadata
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in generate_rows(["kukurasu"], 3)))
    assert len(load_environment(source=str(path)).dataset) == 3
    with pytest.raises(vf.ConfigError, match="does not exist"):
        load_environment(source=str(tmp_path / "missing.jsonl"))


def test_filter_without_the_pass_rate_column_fails_loudly():
    with pytest.raises(vf.ConfigError, match="avg@16_qwen3_4b_instruct_2507"):
        load_environment(source=[row()], max_avg_reward=0.5)


def test_unrated_rows_are_dropped_by_an_active_filter_unless_kept():
    key = i3_logic.DIFFICULTY_KEY
    rows = [row() | {key: 0.2}, row() | {key: None}, row() | {key: 0.9}]
    kept = load_environment(source=rows, max_avg_reward=0.5).dataset
    assert [r[key] for r in kept] == [0.2]
    kept = load_environment(source=rows, max_avg_reward=0.5, keep_unrated=True)
    assert len(kept.dataset) == 2
    with pytest.raises(vf.ConfigError, match="holds 'hard'"):
        load_environment(source=[row() | {key: "hard"}], max_avg_reward=0.5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"families": ["chess"]},
        {"families": []},
        {"difficulty": 4},
        {"difficulty": "extreme"},
        {"num_examples": 0},
        {"source": "sample", "invalid_rows": "ignore"},
    ],
)
def test_bad_arguments_are_config_errors(kwargs):
    with pytest.raises(vf.ConfigError):
        load_environment(**kwargs)


async def test_broken_info_at_scoring_time_is_an_error_not_a_zero():
    env = load_environment(source="generate", families="web_of_lies", num_examples=1)
    good = env.dataset[0]
    pz = i3_logic.puzzle_from_info(good["info"])
    completion = [{"role": "assistant", "content": tagged(pz.answer)}]
    state = {"prompt": good["prompt"], "completion": completion, "info": json.loads(good["info"])}
    await env.rubric.score_rollout(state)
    assert state["reward"] == 1.0 and state.get("error") is None
    broken = {
        **state,
        "info": {"task": "web_of_lies", "game_data_str": '{"metadata": {}}'},
        "error": None,
    }
    await env.rubric.score_rollout(broken)
    assert math.isnan(broken["metrics"]["correct_answer"])
    assert "answer must be a list of yes/no" in broken["error"]["message"]


# -- vf-eval against the scripted server -------------------------------------------------------
def test_vf_eval_rewards_match_the_answers_given(tmp_path, vf_eval_in_process):
    from verifiers.testing import ScriptedServer

    args = {"source": "generate", "num_examples": 2, "difficulty": "mixed", "seed": 5}
    n = 2 * len(i3_logic.GENERATED)
    solutions = {}
    for r in generate_rows(None, 2, "mixed", 5):
        solutions[r["question"]] = i3_logic.puzzle_from_info(r["info"]).answer

    def kind(question: str) -> int:
        return zlib.crc32(question.encode()) % 3  # 0 right, 1 corrupted, 2 unclosed reasoning

    def responder(body):
        question = body["messages"][-1]["content"]
        sol = solutions[question]
        return [
            f"<think>Working it out.</think>\nDone.\n{tagged(sol)}",
            f"<think>Hmm.</think>{tagged(sol + ' 0')}",
            f"<think>I would say {tagged(sol)} but let me",
        ][kind(question)]

    with ScriptedServer(responder) as server:
        rows, meta = vf_eval_in_process(
            tmp_path, "i3-logic", server.base_url, "-n", n, "-r", 2, "--env-args", json.dumps(args)
        )
    assert meta["status"] == "complete" and meta["num_rollouts"] == 2 * n and meta["errors"] == {}
    expected = []
    for r in rows:
        question = r["prompt"][-1]["content"]
        want = 1.0 if kind(question) == 0 else 0.0
        assert r["reward"] == want and r["error"] is None, (r["info"]["task"], r["completion"])
        assert r["metrics"]["answer_block"] == (0.0 if kind(question) == 2 else 1.0)
        expected.append(want)
    assert {r["info"]["task"] for r in rows} == set(i3_logic.GENERATED)
    assert 0 < sum(expected) < len(expected)
    assert meta["avg_reward"] == pytest.approx(mean(expected))


@pytest.mark.parametrize(
    ("text", "block"),
    [
        ("思考……\n答案是 **yes, no**。", "yes, no"),
        ("答案：42", "42"),
        ("最终答案为 (1, 2)", "(1, 2)"),
        ("The answer is 7. 答案是 8", "8"),  # the last label counts, in either language
        ("答案是 3. The final answer is 4.", "4"),
        ("我们得到了答案", ""),  # the word alone is no label
    ],
)
def test_final_answer_reads_the_chinese_answer_label(text, block):
    """Many SynLogic prompts are written in Chinese; "答案是 X" is their "The answer is X"."""
    assert i3_logic.final_answer(text) == block
