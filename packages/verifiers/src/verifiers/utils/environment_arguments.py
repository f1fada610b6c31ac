"""The INTELLECT-3 environments' ``load_environment`` arguments, read once.

Those environments (i3-code, i3-logic, deepdive, hle, the `vf.JudgedBoxedTask` ones) name their
rows and their judge alike: ``source``, ``dataset_name``, ``dataset_subset``, ``dataset_split``;
``judge_model``, ``judge_timeout``, ``judge_max_retries``, ``judge_max_concurrent``,
``judge_sampling_args``. `dataset_from_arguments` and `judge_from_arguments` take an
environment's arguments (``dict(locals())`` taken first thing in ``load_environment``) and read
those names, so that no environment re-plumbs each one into `vf.load_dataset_source` or
`JudgeRubric`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifiers.parsers import Parser
    from verifiers.rubrics import JudgeRubric

__all__ = ["dataset_from_arguments", "judge_from_arguments"]

#: The ``judge_*`` arguments passed on to `JudgeRubric` under the same name where not None (None
#: leaves `JudgeRubric`'s default).
_PASSED_ON = ("judge_timeout", "judge_max_retries", "judge_max_concurrent", "judge_sampling_args")


def dataset_from_arguments(
    arguments: Mapping[str, Any], *, sample: str | Path, required_columns: Iterable[str] = ()
) -> Any:
    """The rows ``arguments`` name, as `vf.load_dataset_source` loads them: ``source`` (absent:
    "auto") of the hub dataset ``dataset_name``, config ``dataset_subset`` (absent: none) and
    split ``dataset_split`` (absent: "train"), with the bundled ``sample``; a column of
    ``required_columns`` missing is a ConfigError naming it."""
    from verifiers.data_sources import load_dataset_source

    return load_dataset_source(
        arguments["dataset_name"],
        source=arguments.get("source", "auto"),
        sample=sample,
        split=arguments.get("dataset_split", "train"),
        config=arguments.get("dataset_subset"),
        required_columns=required_columns,
    )


def judge_from_arguments(
    arguments: Mapping[str, Any],
    parser: Parser,
    *,
    endpoint: Mapping[str, Any],
    prompt: str | None = None,
    sampling_args: dict[str, Any] | None = None,
) -> JudgeRubric:
    """The judge ``arguments`` name: ``judge_model``, and `JudgeRubric`'s ``judge_timeout``,
    ``judge_max_retries``, ``judge_max_concurrent`` and ``judge_sampling_args`` where present
    and not None.

    ``endpoint`` is the client's arguments under the environment's rule (`vf.judge_endpoint`'s
    or its own); ``prompt`` the resolved template (None: `JudgeRubric`'s default);
    ``sampling_args`` replaces ``judge_sampling_args`` for an environment that adds to them.
    """
    from verifiers.rubrics import JudgeRubric

    options = {name: arguments[name] for name in _PASSED_ON if arguments.get(name) is not None}
    if sampling_args is not None:
        options["judge_sampling_args"] = sampling_args
    if prompt is not None:
        options["judge_prompt"] = prompt
    return JudgeRubric(parser=parser, judge_model=arguments["judge_model"], **endpoint, **options)
