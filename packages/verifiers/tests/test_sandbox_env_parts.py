"""SandboxEnv's composed parts (issue 29 item 4): the settings built once from the classic
keywords, which classic code still reads and assigns on the env (mini-swe-agent-plus assigns
`self.spec` after `super().__init__`; upstream tests set `env.max_retries`); the creation
backoff (upstream's `base_delay * backoff_factor**attempt`, capped, plus jitter); the classic
`post_rollout` hook run once per rollout in the call shape decided at construction; and the
leases' refusal of a request this machine cannot serve, as an ERROR status and not a hang."""

import asyncio
import dataclasses

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.sandbox_env import SandboxEnv
from verifiers.envs.sandbox_settings import CreationRetry
from verifiers.sandbox import ProcessProvider

GiB = 2**30


def make_env(cls: type[SandboxEnv] = SandboxEnv, **kwargs) -> SandboxEnv:
    rows = Dataset.from_list([{"question": "q", "answer": ""}])
    return cls(dataset=rows, provider=ProcessProvider(), pool_size=0, **kwargs)


def test_classic_attributes_read_and_write_the_settings_the_leases_use():
    env = make_env(memory_gb=1, max_retries=3, timeout_per_command_seconds=7)
    settings = env.sandbox_settings
    assert env.sandbox_leases.settings is settings
    assert env.spec.memory == 1 * GiB and env.max_retries == 3
    assert env.timeout_per_command_seconds == 7
    assert env.sandbox_request is settings.request and env.sandbox_request.memory_gb == 1
    env.spec = dataclasses.replace(env.spec, image=None)
    env.max_retries = 0
    env.pool_size = 2
    assert settings.spec.image is None and settings.retry.max_retries == 0
    assert settings.pool_size == 2
    # the classic request still maps to the (assigned) env spec, so the warm pool serves it
    state = vf.State(input={"prompt": [], "answer": ""})
    assert env.get_sandbox_spec(state) is env.spec


def test_a_subclass_may_assign_classic_attributes_before_super_init():
    """Upstream subclasses set attributes before calling the base constructor, which then
    sets them again from its keywords."""

    class Early(SandboxEnv):
        def __init__(self, **kwargs):
            self.timeout_per_command_seconds = 99
            assert self.timeout_per_command_seconds == 99
            super().__init__(**kwargs)

    env = make_env(Early, timeout_per_command_seconds=5)
    assert env.timeout_per_command_seconds == 5 == env.sandbox_settings.timeout_per_command_seconds


def test_creation_backoff_grows_exponentially_up_to_its_cap_plus_jitter():
    retry = CreationRetry(base_delay=0.5, backoff_factor=2.0, max_backoff_seconds=3.0, jitter=0.01)
    for attempt, base in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 3.0), (10, 3.0)]:
        assert base <= retry.delay(attempt) <= base + 0.01


async def test_post_rollout_runs_once_per_rollout_in_its_classic_shape():
    seen: list = []

    class Modern(SandboxEnv):
        async def post_rollout(self, state):
            seen.append(("modern", state["id"]))

    class Classic(SandboxEnv):  # the 0.1.6-0.1.7 form
        async def post_rollout(self, messages, state, **kwargs):
            seen.append(("classic", messages))

    for cls in (Modern, Classic):
        env = make_env(cls)
        state = vf.State(input={"prompt": [{"role": "user", "content": "q"}], "answer": ""})
        state["id"] = 1
        state["completion"] = [{"role": "assistant", "content": "a"}]
        await env.destroy_sandbox(state)  # no sandbox was opened: the hook still runs
        await env.destroy_sandbox(state)
        env._post_rollout.forget(state)
        await env.teardown()
    assert seen == [
        ("modern", 1),
        ("classic", [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]),
    ]


async def test_a_request_this_machine_cannot_serve_is_an_error_status():
    env = make_env(ignore_docker_image=False, docker_image="python:3.11-slim")
    request = env.sandbox_request.model_copy(update={"gpu_count": 1})
    sandbox_id = env.sandbox_leases.open_lease(request)
    await asyncio.sleep(0)  # the refusal runs as the lease's task
    status, why = env.sandbox_leases.lease_status(sandbox_id)
    assert status == "ERROR" and "no GPUs" in (why or "")
    with pytest.raises(vf.SandboxError, match="no GPUs"):
        await env.sandbox_leases.wait(sandbox_id)
    assert await env.sandbox_leases.close(sandbox_id)
    assert env.sandbox_leases.lease_status(sandbox_id) == ("UNKNOWN", None)
    await env.teardown()
