"""Tutorial: a tool-using agent — the model calls Python functions, the rubric checks the end."""

from datasets import Dataset

import verifiers as vf

INVENTORY = {"apples": 12, "pears": 7, "plums": 30}


def stock(item: str) -> int:
    """How many units of an item are in stock.

    Args:
        item: The item's name, e.g. "apples".
    """
    if item not in INVENTORY:
        raise KeyError(f"unknown item {item!r}; known: {', '.join(INVENTORY)}")
    return INVENTORY[item]


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def load_environment(**kwargs) -> vf.Environment:
    rows = [
        {"question": "How many apples and pears are in stock together?", "answer": "19"},
        {"question": "How many plums and apples are in stock together?", "answer": "42"},
    ]

    def correct(completion, answer) -> float:
        final = completion[-1]["content"] or ""
        return 1.0 if final.strip().endswith(answer) else 0.0

    def tool_calls(state) -> float:
        return float(
            sum(len(s["completion"][-1].get("tool_calls") or []) for s in state["trajectory"])
        )

    rubric = vf.Rubric(funcs=[correct, tool_calls], weights=[1.0, 0.0])
    return vf.ToolEnv(
        dataset=Dataset.from_list(rows),
        tools=[stock, add],
        rubric=rubric,
        max_turns=6,
        system_prompt="Use the tools, then give the final number as the last word.",
        **kwargs,
    )
