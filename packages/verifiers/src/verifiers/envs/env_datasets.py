"""An environment's datasets: the sources it was given, formatted for its prompts."""

from __future__ import annotations

from typing import Any, Protocol

from verifiers.dataset import callable_builder, dataset_rows, format_dataset, take_rows
from verifiers.envs.completion_mode import format_text_dataset
from verifiers.errors import ConfigError


class DatasetEnv(Protocol):
    """What formatting reads of the environment (set at construction, assignable later)."""

    dataset: Any
    eval_dataset: Any
    message_type: str
    system_prompt: str | None
    few_shot: list[dict[str, Any]] | None
    map_kwargs: dict[str, Any]

    def build_dataset(self) -> Any: ...

    def build_eval_dataset(self) -> Any: ...


class EnvDatasets:
    """The training and evaluation datasets of one environment: formatted (chat prompts or
    text) when given, or built from a callable source on first use. The formatted datasets
    live on the environment as `env.dataset` / `env.eval_dataset`, which classic code reads
    and assigns; building goes through `env.build_dataset()` so subclasses may override it."""

    def __init__(self, env: DatasetEnv, source: Any, eval_source: Any) -> None:
        if source is None and eval_source is None:
            raise ConfigError(
                "Either dataset or eval_dataset must be provided (an environment needs a dataset "
                "to roll out)"
            )
        self.env = env
        self.source = source
        self.eval_source = eval_source

    def format(self, dataset: Any, what: str) -> Any:
        if dataset is None:
            return None
        env = self.env
        if env.message_type == "completion":
            return format_text_dataset(dataset, what)
        return format_dataset(dataset, env.system_prompt, env.few_shot, env.map_kwargs, what)

    def format_given(self) -> None:
        """Format the datasets given as data now (callable sources wait for first use)."""
        env = self.env
        env.dataset = None if callable_builder(self.source) else self.format(self.source, "dataset")
        env.eval_dataset = (
            None
            if callable_builder(self.eval_source)
            else self.format(self.eval_source, "eval_dataset")
        )

    def build(self) -> Any:
        env = self.env
        if env.dataset is None and callable_builder(self.source):
            env.dataset = self.format(self.source(), "dataset")
        return env.dataset

    def build_eval(self) -> Any:
        env = self.env
        if env.eval_dataset is None and callable_builder(self.eval_source):
            env.eval_dataset = self.format(self.eval_source(), "eval_dataset")
        return env.eval_dataset

    def get(self, n: int = -1, seed: int | None = None) -> Any:
        ds = self.env.build_dataset()
        if ds is None:
            raise ConfigError("this environment has no training dataset")
        return take_rows(ds, n, seed)

    def eval_or_train(self) -> Any:
        ds = self.env.build_eval_dataset()
        if ds is None:
            ds = self.env.build_dataset()
        if ds is None:
            raise ConfigError("this environment has no dataset")
        return ds

    def get_eval(self, n: int = -1, seed: int | None = None) -> Any:
        return take_rows(self.eval_or_train(), n, seed)

    def eval_inputs(
        self,
        num_examples: int = -1,
        rollouts_per_example: int = 1,
        shuffle: bool = False,
        shuffle_seed: int | None = None,
    ) -> list[dict[str, Any]]:
        """The inputs `evaluate` rolls out: each example repeated, with its rollout index."""
        rows = dataset_rows(
            self.eval_or_train(), num_examples, shuffle_seed if shuffle else None, shuffle
        )
        repeats = max(1, rollouts_per_example)
        if repeats == 1:  # the rows are new dicts: indexed in place, not copied
            for row in rows:
                row["rollout_index"] = 0
            return rows
        return [{**row, "rollout_index": j} for row in rows for j in range(repeats)]
