"""How a MultiTurnEnv class's hooks are called is decided once, when the class is defined
(`verifiers.envs.classic_hooks`; issue 29 item 3): the rollout loop no longer asks each turn
which release's shape a hook has, and no instance has its methods replaced.

The hook shapes are upstream's: 0.1.2's sync `env_response`/`is_completed(messages, state)`
returning `(messages, state)`, 0.1.5's async dict-era forms, 0.1.8+'s `is_completed(state)`
override and `@vf.stop` conditions, and StatefulToolEnv's sync or async `update_tool_args`."""

from __future__ import annotations

import functools

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs import classic_hooks
from verifiers.testing import Reply, ScriptedServer, ScriptResponder
from verifiers.testing.responders import last_message


@pytest.fixture(scope="module")
def server():
    """Asks for the `echo` tool once when tools are offered, then answers plain text."""
    script = ScriptResponder(
        [
            (lambda body: last_message(body).get("role") == "tool", "done"),
            (
                lambda body: bool(body.get("tools")),
                Reply(tool_calls=[{"name": "echo", "arguments": {"text": "hi"}}]),
            ),
            (lambda body: True, "ok"),
        ]
    )
    with ScriptedServer(script) as srv:
        yield srv


def rows(n: int = 1) -> Dataset:
    return Dataset.from_list([{"question": f"q{i}", "answer": "a"} for i in range(n)])


def run(env: vf.Environment, srv: ScriptedServer, **kwargs) -> dict:
    return env.evaluate_sync(srv.base_url, "m", num_examples=1, **kwargs)["outputs"][0]


@pytest.fixture
def classic_replies(monkeypatch):
    """The replies that went through the classic adapter, in order."""
    seen: list = []
    adapt = classic_hooks.classic_reply

    def counting(reply, messages, state):
        seen.append(reply)
        return adapt(reply, messages, state)

    monkeypatch.setattr(classic_hooks, "classic_reply", counting)
    return seen


class DictEra(vf.MultiTurnEnv):
    """0.1.5: async `is_completed(messages, state)` deferring to the base with `super()`, and
    replies in each classic form: `(messages, state)` with a new state dict, one message, none."""

    async def is_completed(self, messages, state, **kwargs):
        if await super().is_completed(messages, state, **kwargs):
            return True
        return len(state["responses"]) >= 4

    async def env_response(self, messages, state, **kwargs):
        turn = len(state["responses"])
        if turn == 1:
            return [{"role": "user", "content": "tuple"}], {**state, "seen": "tuple"}
        if turn == 2:
            return {"role": "user", "content": "one message"}
        return None


class Modern(vf.MultiTurnEnv):
    """0.1.8+: an `is_completed(state)` override beside the stop conditions."""

    async def is_completed(self, state, **kwargs):
        return await super().is_completed(state) or len(state["trajectory"]) >= 2

    async def env_response(self, messages, state, **kwargs):
        return [{"role": "user", "content": "more"}]


def test_hook_callers_are_chosen_per_class_without_patching_instances():
    """Each class gets its callers when it is defined; the instance keeps the class's own
    `is_completed` (the dict-era adaptation used to replace it on the instance)."""
    dict_era, modern = DictEra(dataset=rows()), Modern(dataset=rows())
    assert DictEra._hooks is not Modern._hooks is not vf.MultiTurnEnv._hooks
    assert vf.ToolEnv._hooks.is_done is not DictEra._hooks.is_done
    for env in (dict_era, modern):
        assert "is_completed" not in vars(env)
        assert env.is_completed.__func__ is type(env).is_completed
    # a subclass of a dict-era class inherits the dict-era shape
    assert classic_hooks.is_dict_era_is_completed(type("Sub", (DictEra,), {}).is_completed)
    assert not classic_hooks.is_dict_era_is_completed(Modern.is_completed)


def test_dict_era_replies_are_adapted(server, classic_replies):
    """0.1.5 dict-era forms: the `(messages, state)` reply's new dict updates the state, one
    message is appended as a list of one, and `None` adds nothing; the class's own
    `is_completed(messages, state)` ends the rollout (upstream 0.1.5 multiturn_env.py)."""
    out = run(DictEra(dataset=rows(), max_turns=10), server, state_columns=["seen"])
    assert out["error"] is None
    assert out["stop_condition"] == "is_completed" and out["num_turns"] == 4
    assert out["seen"] == "tuple"
    user_turns = [m["content"] for m in out["completion"] if m["role"] == "user"]
    assert user_turns == ["tuple", "one message"]
    assert len(classic_replies) == 3 and isinstance(classic_replies[0], tuple)


def test_modern_override_is_called_with_the_state(server):
    """0.1.8+: an `is_completed(state)` override is what the loop asks (with `super()`
    running the stop conditions), as is an `is_completed` set on the instance."""
    out = run(Modern(dataset=rows(), max_turns=10), server)
    assert out["error"] is None and out["num_turns"] == 2
    assert out["stop_condition"] is None  # the override ended it, not a stop condition

    env = vf.MultiTurnEnv(dataset=rows(), max_turns=10)

    async def one_turn(state, **kwargs):  # a test double set on the instance is asked too
        return len(state["trajectory"]) >= 1

    env.is_completed = one_turn
    out = run(env, server)
    assert out["error"] is None and out["num_turns"] == 1


def test_sdk_tool_replies_skip_the_classic_adapter(server, classic_replies):
    """ToolEnv's `env_response` returns messages (its class says so): its replies are used as
    they are, while a subclass overriding `env_response` gets the classic adapter."""

    def echo(text: str) -> str:
        """Echo the text."""
        return text

    out = run(vf.ToolEnv(dataset=rows(), tools=[echo]), server)
    assert out["error"] is None and out["completion"][1] == {
        "role": "tool",
        "content": "hi",
        "tool_call_id": out["completion"][0]["tool_calls"][0]["id"],
    }
    assert classic_replies == []

    class Wrapped(vf.ToolEnv):
        async def env_response(self, messages, state, **kwargs):
            return await super().env_response(messages, state, **kwargs)

    out = run(Wrapped(dataset=rows(), tools=[echo]), server)
    assert out["error"] is None and out["completion"][1]["content"] == "hi"
    assert len(classic_replies) == 1


class SyncEra(vf.MultiTurnEnv):
    """0.1.2: every hook sync; `add_model_response` and `init_state` overridden sync too."""

    def is_completed(self, messages, state, **kwargs):
        return state["turn"] >= 2

    def env_response(self, messages, state, **kwargs):
        state["replied"] = state.get("replied", 0) + 1
        return [{"role": "user", "content": "again"}], state

    def init_state(self, input, client, model, sampling_args=None):
        state = self.new_state(input, client, model, sampling_args)
        state["sync_init"] = True
        return state


class HiddenCoroutine(vf.MultiTurnEnv):
    """A decorated `add_model_response` whose sync wrapper returns the coroutine."""

    @staticmethod
    def _wrap(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        return wrapper

    @_wrap
    async def add_model_response(self, state, prompt, response):
        state["wrapped_turns"] = state.get("wrapped_turns", 0) + 1
        await super().add_model_response(state, prompt, response)

    async def env_response(self, messages, state, **kwargs):
        return [{"role": "user", "content": "again"}]


def test_classic_sync_hooks_and_hidden_coroutines(server):
    """0.1.2's sync hooks run (a sync `is_completed(messages, state)` ends the rollout), a
    sync `init_state` override is used as it is, and a hook whose decorator hides its
    coroutine is still awaited."""
    out = run(SyncEra(dataset=rows(), max_turns=5), server, state_columns=["sync_init", "replied"])
    assert out["error"] is None and out["stop_condition"] == "is_completed"
    assert out["num_turns"] == 2 and out["replied"] == 1 and out["sync_init"] is True
    out = run(HiddenCoroutine(dataset=rows(), max_turns=3), server, state_columns=["wrapped_turns"])
    assert out["error"] is None and out["wrapped_turns"] == 3


class AsyncInjecting(vf.StatefulToolEnv):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_tool(self.echo, args_to_skip=["session"])

    def echo(self, text: str, session: str) -> str:
        """Echo the text in a session."""
        return f"{session}:{text}"

    async def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs):
        return {**tool_args, "session": "s1"}


class BadInjecting(AsyncInjecting):
    def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs):
        return ["not", "a", "dict"]


def test_update_tool_args_sync_or_async(server):
    """StatefulToolEnv: an async `update_tool_args` (upstream 0.3) is awaited; a sync one
    (0.1.8) returning something other than a dict is a clear `ToolCallError`."""
    out = run(AsyncInjecting(dataset=rows()), server)
    assert out["error"] is None and out["completion"][1]["content"] == "s1:hi"
    out = run(BadInjecting(dataset=rows()), server)
    assert out["error"]["error"] == "ToolCallError"
    assert "update_tool_args returned list" in out["error"]["message"]


class TextTuple(vf.MultiTurnEnv):
    """A 0.1.x text environment replying `(text, state)`."""

    async def env_response(self, messages, state, **kwargs):
        return "\nUser: more\nAssistant:", state


def test_text_environment_tuple_reply(server):
    """`message_type="completion"`: the text of a `(text, state)` reply is appended to the
    running string (classic 0.1.x text environments)."""
    env = TextTuple(dataset=rows(), max_turns=2, message_type="completion")
    out = run(env, server)
    assert out["error"] is None and out["num_turns"] == 2
    assert out["completion"] == "ok\nUser: more\nAssistant:ok"
