"""An EnvGroup whose two members load through one noisy loader: each logs the same warning and
runs a `datasets` map (which draws a progress bar unless bars are off), as the INTELLECT-3
mixture's members did when they fell back to one bundled sample (issue 27)."""

import logging

from datasets import Dataset

import verifiers as vf

logger = logging.getLogger("verifiers.data")


def _member() -> vf.SingleTurnEnv:
    logger.warning("using the bundled sample of some/dataset: the hub is unreachable")
    rows = Dataset.from_list(
        [{"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(3)]
    )
    rows = rows.map(lambda row: {"question": row["question"].strip()})

    def exact(completion, answer, **kwargs) -> float:
        return 1.0 if answer in (completion[-1]["content"] or "") else 0.0

    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric(funcs=[exact]))


def load_environment(**kwargs):
    return vf.EnvGroup(envs=[_member(), _member()], env_names=["a", "b"], **kwargs)
