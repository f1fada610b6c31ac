"""Text environments (`message_type="completion"`): prompts and completions are strings.

As classic verifiers 0.1.x ran them: the prompt is a string sent to `/v1/completions`, each
model turn's completion is the continuation text, an environment response is text appended to
the running string, and the rollout's `completion` is everything after the prompt. (0.3.x wraps
the same text into `role: "text"` messages; see the package README's deliberate differences.)
"""

from __future__ import annotations

from typing import Any

from verifiers.dataset import check_columns, with_example_ids
from verifiers.errors import ConfigError

MESSAGE_TYPES = ("chat", "completion")


def check_message_type(message_type: Any, system_prompt: Any, few_shot: Any) -> None:
    """Reject what a text environment cannot have (classic 0.1.x raised for the same)."""
    if message_type not in MESSAGE_TYPES:
        raise ConfigError(f"message_type must be 'chat' or 'completion', got {message_type!r}")
    if message_type == "completion" and (system_prompt or few_shot):
        raise ConfigError(
            "system_prompt and few_shot are chat settings; a message_type='completion' "
            "environment sends its prompt text as it is (put them into the prompt column)"
        )


def format_text_dataset(dataset: Any, what: str = "dataset") -> Any:
    """Give every row a text `prompt` (the `question` when there is no prompt column) and an
    integer `example_id`."""
    check_columns(list(dataset.column_names), what)
    dataset, columns = with_example_ids(dataset)
    if "prompt" not in columns:
        prompts = [_question_text(q) for q in dataset["question"]]
        return dataset.add_column("prompt", prompts)
    dtype = getattr(dataset.features["prompt"], "dtype", None)
    if dtype not in ("string", "large_string"):
        raise ConfigError(
            f"{what}'s 'prompt' column holds chat messages; a message_type='completion' "
            "environment needs text prompts (a string column)"
        )
    return dataset


def text_prompt(prompt: Any) -> str:
    """A rollout input's prompt as the text a text environment sends."""
    if isinstance(prompt, str):
        return prompt
    raise ConfigError(
        f"a message_type='completion' environment needs a text prompt, got "
        f"{type(prompt).__name__} (chat messages belong to message_type='chat')"
    )


def append_text(so_far: str, reply: Any) -> str:
    """The running text after an environment response (a string, or nothing)."""
    if reply is None:
        return so_far
    if isinstance(reply, str):
        return so_far + reply
    raise ConfigError(
        f"env_response of a message_type='completion' environment returns text, got "
        f"{type(reply).__name__}"
    )


def _question_text(question: Any) -> str:
    return "" if question is None else str(question)
