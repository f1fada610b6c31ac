"""`prime env init`: a new environment package that installs and evaluates as it is."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import UsageError
from .refs import module_name

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")

PYPROJECT = """\
[project]
name = "{name}"
version = "0.1.0"
description = "{description}"
readme = "README.md"
requires-python = ">=3.11"
keywords = ["verifiers", "single-turn"]
dependencies = ["verifiers>=0.5"]

[project.entry-points."verifiers.environments"]
{name} = "{module}"

[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["{module}"]

[tool.hatch.build.targets.sdist]
include = ["{module}", "tests", "README.md"]
"""

MODULE = '''\
"""{name}: {description}

Questions are generated from a seed, so the environment needs no download. The model puts its
final answer in \\\\boxed{{}}; the reward is 1.0 for an exact match, 0.0 otherwise.
"""

from __future__ import annotations

import random
from typing import Any

import verifiers as vf

SYSTEM_PROMPT = "Solve the problem. Put only the final number in \\\\boxed{{}}."

parser = vf.MaybeThinkParser(extract_fn=vf.extract_boxed_answer)


def make_rows(num_examples: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(num_examples):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        op = rng.choice("+-*")
        result = {{"+": a + b, "-": a - b, "*": a * b}}[op]
        rows.append({{"question": f"What is {{a}} {{op}} {{b}}?", "answer": str(result)}})
    return rows


def exact_answer(completion: Any, answer: str, **_: Any) -> float:
    return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0


def load_environment(num_examples: int = 50, seed: int = 0) -> vf.Environment:
    from datasets import Dataset

    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(make_rows(num_examples, seed)),
        system_prompt=SYSTEM_PROMPT,
        parser=parser,
        rubric=vf.Rubric(funcs=[exact_answer], parser=parser),
    )
'''

TEST = """\
import verifiers as vf

from {module} import exact_answer, load_environment, make_rows


def test_loads_with_a_dataset():
    env = load_environment(num_examples=4)
    assert isinstance(env, vf.Environment)
    assert len(env.get_dataset()) == 4


def test_reward_is_exact_match_of_the_boxed_answer():
    row = make_rows(1, seed=3)[0]
    right = [{{"role": "assistant", "content": f"so \\\\boxed{{{{{{row['answer']}}}}}}"}}]
    wrong = [{{"role": "assistant", "content": "\\\\boxed{{-1}}"}}]
    assert exact_answer(right, row["answer"]) == 1.0
    assert exact_answer(wrong, row["answer"]) == 0.0
"""

README = """\
# {name}

{description}

A single-turn verifiers environment: arithmetic questions generated from a seed, reward 1.0
when the model's `\\boxed{{}}` answer is exactly right.

```bash
uv pip install -e .                      # or: prime env install <owner>/{name}
vf-eval {name} -m <model> -b <OpenAI-compatible base URL> -n 20 -r 3
pytest tests                             # the package's own checks
prime env push                           # publish a new version to the hub
```

`load_environment(num_examples=50, seed=0)`.
"""


def init_environment(name: str, parent: Path, description: str | None = None) -> Path:
    if not _NAME.match(name):
        raise UsageError(
            f"{name!r} is not a valid environment name: use lower-case letters, digits and "
            "single '-' or '_' between them, starting with a letter"
        )
    target = parent / name
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} already exists and is not empty")
    module = module_name(name)
    desc = description or f"The {name} environment."
    if '"' in desc or "\\" in desc:
        raise UsageError("the description may not contain quotes or backslashes")
    fields = {"name": name, "module": module, "description": desc}
    (target / module).mkdir(parents=True, exist_ok=True)
    (target / "tests").mkdir(exist_ok=True)
    (target / "pyproject.toml").write_text(PYPROJECT.format(**fields))
    (target / module / "__init__.py").write_text(MODULE.format(**fields))
    (target / "tests" / f"test_{module}.py").write_text(TEST.format(**fields))
    (target / "README.md").write_text(README.format(**fields))
    (target / ".gitignore").write_text("dist/\n__pycache__/\noutputs/\n")
    return target
