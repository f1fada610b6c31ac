"""A multi-turn rollout's conversation: model turns as trajectory steps, the next turn's prompt,
and the rollout's `completion` rendered from the trajectory.

Chat environments hold message lists; text (`message_type="completion"`) environments hold one
running string, to which the environment's replies are appended as text.
"""

from __future__ import annotations

from typing import Any, cast

from verifiers.client import ModelResponse
from verifiers.envs.completion_mode import append_text
from verifiers.state import State
from verifiers.types import Messages, TrajectoryStep
from verifiers.utils.response_utils import response_tokens


def messages_so_far(state: State) -> Messages:
    """The conversation up to the last model turn: messages, or one string in a text
    environment."""
    # (`Messages` names chat messages only; a text environment's conversation is a string.)
    if not state["trajectory"]:
        prompt = state["prompt"]
        return cast(Messages, prompt) if isinstance(prompt, str) else list(prompt)
    last = state["trajectory"][-1]
    if isinstance(last["prompt"], str):
        return cast(Messages, last["prompt"] + cast(str, last["completion"]))
    return [*last["prompt"], *last["completion"]]


def next_prompt(messages: Messages, reply: Any, state: State) -> Messages:
    """`messages` followed by the environment's reply (messages, already a list; text in a
    text environment). A final reply with nothing in it leaves the conversation as it was."""
    if isinstance(messages, str):
        return cast(Messages, append_text(messages, reply))
    if not reply and dict.get(state, "final_env_response") is not None:
        return messages
    return messages + reply


def trajectory_step(
    state: State, prompt: Messages, response: ModelResponse, max_seq_len: int | None
) -> TrajectoryStep:
    """The trajectory step of one model turn: what was sent, what came back, its tokens."""
    # (a reply of ours without token ids has none to read: no call)
    if type(response) is ModelResponse and response.completion_ids is None:
        tokens = None
    else:
        tokens = response_tokens(response, max_seq_len)
    text = response.text if isinstance(prompt, str) else None
    return {
        "prompt": prompt,
        "completion": text if text is not None else [response.message],  # type: ignore[typeddict-item]
        "response": response.summary(),
        "tokens": tokens,
        "reward": None,
        "advantage": None,
        "is_truncated": response.is_truncated or bool(tokens and tokens["is_truncated"]),
        "trajectory_id": state["trajectory_id"],
        "extras": {},
    }


def render_completion(state: State) -> None:
    """Set `state["completion"]`: everything after the prompt, the final environment
    response included."""
    trajectory = state["trajectory"]
    if not trajectory:
        state["completion"] = "" if isinstance(state["prompt"], str) else []
        return
    final = dict.get(state, "final_env_response")
    last = trajectory[-1]
    prompt = state["prompt"]
    if (
        last["prompt"] is prompt
        and isinstance(last["completion"], list)
        and not isinstance(prompt, str)
    ):
        # the last turn was sent the prompt itself (a single-turn rollout): what follows
        # the prompt is that turn's completion, without the whole conversation's list
        completion = list(last["completion"])
        if final:
            completion += final if isinstance(final, list) else [final]
        state["completion"] = completion
        return
    full = messages_so_far(state)
    if isinstance(full, str):
        full = append_text(full, final or None)
    elif final:
        full = full + (final if isinstance(final, list) else [final])
    state["completion"] = full[len(prompt) :]
