"""Minesweeper (SynLogic): name every hidden cell that must hold a mine.

The board shows revealed numbers (mines among the up-to-eight neighbours) and hidden cells
``X``; no mine total is given. SynLogic's metadata: ``revealed_grid`` (strings ``"0"``-``"8"``
and ``"X"``), ``full_grid`` (``"M"`` for mines), ``current_mines`` (0-based ``[row, col]``
pairs) and ``n``. ``current_mines`` is what SynLogic's generator deduces by repeating one rule
(a number whose hidden neighbours plus known mines equal it makes all of them mines).

The answer is a list of 0-based ``(row, column)`` tuples, ``[(0, 1), (2, 3)]``, written bare at
the end of the reply (as the prompt's example shows) or in an answer block. It scores 1 when the
set of cells equals ``current_mines`` (upstream's check), or equals the exact set of cells that
are mines in every placement consistent with the numbers. That second set can be larger than
the generator's one-rule deduction; a model that deduces more (as the prompt asks: "all cells
that must be mines") is right, so it is accepted too. The exact set is computed by a search
with a fixed node budget; past the budget only ``current_mines`` is accepted.
"""

from __future__ import annotations

import random

from i3_logic.answers import list_answer_block, parse_cells
from i3_logic.puzzle import ANSWER_INSTRUCTION_LOWER, Puzzle, PuzzleDataError, require

NAME = "minesweeper"
ALIASES = ()
# size, mine density, share of safe cells revealed (SynLogic's defaults are 8, 0.2, 0.4)
LEVELS = {1: (5, 0.2, 0.5), 2: (6, 0.2, 0.45), 3: (8, 0.2, 0.4)}
SEARCH_BUDGET = 5_000  # search nodes for the exact set of forced mines (bounds verify time)


def neighbours(r: int, c: int, n: int) -> list[tuple[int, int]]:
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < n and 0 <= c + dc < n
    ]


def one_rule_mines(revealed: list[list[str]]) -> set[tuple[int, int]]:
    """SynLogic's deduction: repeat "hidden neighbours + known mines == number => all mines"."""
    n = len(revealed)
    mines: set[tuple[int, int]] = set()
    changed = True
    while changed:
        changed = False
        for r in range(n):
            for c in range(n):
                v = revealed[r][c]
                if v == "X" or v == "0":
                    continue
                around = neighbours(r, c, n)
                hidden = [p for p in around if revealed[p[0]][p[1]] == "X" and p not in mines]
                known = sum(p in mines for p in around)
                if hidden and len(hidden) + known == int(v):
                    mines.update(hidden)
                    changed = True
    return mines


def forced_mines(revealed: list[list[str]]) -> set[tuple[int, int]] | None:
    """Hidden cells that are mines in every placement agreeing with the numbers; None when no
    placement agrees or the search runs past ``SEARCH_BUDGET`` nodes (a deterministic bound).

    Only hidden cells next to a number are constrained. They split into components (cells
    linked through shared numbers) that are solved apart: a cell is forced when its component
    has no placement with it safe.
    """
    n = len(revealed)
    numbers = [
        (int(revealed[r][c]), [p for p in neighbours(r, c, n) if revealed[p[0]][p[1]] == "X"])
        for r in range(n)
        for c in range(n)
        if revealed[r][c] != "X"
    ]
    if any(len(cells) < want for want, cells in numbers):
        return None
    touching: dict[tuple[int, int], list[int]] = {}
    for k, (_, cells) in enumerate(numbers):
        for p in cells:
            touching.setdefault(p, []).append(k)
    budget = [SEARCH_BUDGET]
    forced: set[tuple[int, int]] = set()
    seen: set[tuple[int, int]] = set()
    for start in sorted(touching):
        if start in seen:
            continue
        order = [start]  # breadth-first, so each number's cells are decided close together
        seen.add(start)
        for p in order:
            for k in touching[p]:
                for q in numbers[k][1]:
                    if q not in seen:
                        seen.add(q)
                        order.append(q)
        try:
            found = _component_forced(order, numbers, touching, budget)
        except OverflowError:
            return None
        if found is None:
            return None
        forced |= found
    return forced


def _component_forced(
    order: list[tuple[int, int]],
    numbers: list[tuple[int, list[tuple[int, int]]]],
    touching: dict[tuple[int, int], list[int]],
    budget: list[int],
) -> set[tuple[int, int]] | None:
    value: dict[tuple[int, int], int] = {}

    def assign(p: tuple[int, int], v: int, trail: list[tuple[int, int]]) -> bool:
        """Set ``p`` and everything the numbers then force; False on a contradiction."""
        stack = [(p, v)]
        while stack:
            q, w = stack.pop()
            if q in value:
                if value[q] != w:
                    return False
                continue
            value[q] = w
            trail.append(q)
            for k in touching[q]:
                want, cells = numbers[k]
                mines = sum(value.get(c) == 1 for c in cells)
                undecided = [c for c in cells if c not in value]
                if not mines <= want <= mines + len(undecided):
                    return False
                if undecided and mines == want:
                    stack.extend((c, 0) for c in undecided)
                elif undecided and mines + len(undecided) == want:
                    stack.extend((c, 1) for c in undecided)
        return True

    def undo(trail: list[tuple[int, int]]) -> None:
        for q in trail:
            del value[q]

    def search() -> dict[tuple[int, int], int] | None:
        budget[0] -= 1
        if budget[0] < 0:
            raise OverflowError
        p = next((q for q in order if q not in value), None)
        if p is None:
            return dict(value)
        for v in (0, 1):
            trail: list[tuple[int, int]] = []
            found = search() if assign(p, v, trail) else None
            undo(trail)
            if found is not None:
                return found
        return None

    def solve_with(p: tuple[int, int] | None, v: int) -> dict[tuple[int, int], int] | None:
        trail: list[tuple[int, int]] = []
        found = search() if p is None or assign(p, v, trail) else None
        undo(trail)
        return found

    first = solve_with(None, 0)
    if first is None:
        return None
    candidates = {p for p, v in first.items() if v == 1}
    forced = set()
    while candidates:
        p = min(candidates)
        candidates.discard(p)
        other = solve_with(p, 0)  # is there a placement with this cell safe?
        if other is None:
            forced.add(p)
        else:
            candidates -= {q for q, v in other.items() if v == 0}
    return forced


def _grid_text(grid: list[list[str]]) -> str:
    return "\n".join("  ".join(row) for row in grid)


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n, density, share = LEVELS[difficulty]
    cells = [(r, c) for r in range(n) for c in range(n)]
    while True:  # SynLogic keeps a board only when its rule deduces at least one mine
        mine_set = set(rng.sample(cells, int(n * n * density)))
        full = [
            [
                "M" if (r, c) in mine_set else str(sum(p in mine_set for p in neighbours(r, c, n)))
                for c in range(n)
            ]
            for r in range(n)
        ]
        safe = [p for p in cells if p not in mine_set]
        shown = set(rng.sample(safe, max(1, int(len(safe) * share))))
        revealed = [[full[r][c] if (r, c) in shown else "X" for c in range(n)] for r in range(n)]
        mines = sorted(one_rule_mines(revealed))
        if mines:
            break
    question = (
        f"This is a {n} x {n} Minesweeper grid. A number (0-8) is a revealed cell; it counts "
        "the mines among its 8 neighbours (horizontal, vertical and diagonal). X is an "
        "unrevealed cell. Find every unrevealed cell that must hold a mine, given the revealed "
        f"numbers.\n\n{_grid_text(revealed)}\n\n"
        "Give the cells as a Python list of (row, column) tuples, counting rows and columns "
        "from 0 at the top-left, at the end of your reply, for example:\n[(0, 1), (2, 3), (3, 0)]"
        f"\n(Or: {ANSWER_INSTRUCTION_LOWER})"
    )
    metadata = {
        "full_grid": full,
        "revealed_grid": revealed,
        "current_mines": [[r, c] for r, c in mines],
        "n": n,
        "mine_den": density,
        "reveal_frac": share,
    }
    return Puzzle(NAME, question, str([tuple(m) for m in mines]), difficulty, metadata)


def _parts(puzzle: Puzzle) -> tuple[list[list[str]], set[tuple[int, int]]]:
    revealed, mines = require(puzzle.metadata, NAME, "revealed_grid", "current_mines")
    n = len(revealed) if isinstance(revealed, list) else 0
    allowed = {"X", *map(str, range(9))}
    if not n or not all(
        isinstance(row, list) and len(row) == n and all(v in allowed for v in row)
        for row in revealed
    ):
        raise PuzzleDataError(
            f"{NAME} metadata 'revealed_grid' must be a square grid of '0'-'8' and 'X'"
        )
    if not isinstance(mines, list) or not all(
        isinstance(m, list)
        and len(m) == 2
        and all(type(v) is int and 0 <= v < n for v in m)
        and revealed[m[0]][m[1]] == "X"
        for m in mines
    ):
        raise PuzzleDataError(
            f"{NAME} metadata 'current_mines' must be [row, col] pairs (from 0) of X cells"
        )
    return revealed, {(r, c) for r, c in mines}


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    revealed, mines = _parts(puzzle)
    # AnswerError (a 0) for no pairs, or anything besides them (a hedge).
    pairs = parse_cells(list_answer_block(text))
    given = set(pairs)
    if len(given) != len(pairs):
        return 0.0  # a cell named twice
    if given == mines:
        return 1.0
    # The exact forced set contains the one-rule mines and only hidden cells; search only then.
    hidden = all(0 <= r < len(revealed) and 0 <= c < len(revealed) for r, c in given) and all(
        revealed[r][c] == "X" for r, c in given
    )
    if not (hidden and mines < given):
        return 0.0
    return 1.0 if given == forced_mines(revealed) else 0.0
