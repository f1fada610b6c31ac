"""One exception hierarchy for the SDK.

`Error` is the root. Rollout-level failures are recorded on the rollout's output rather than
raised out of `generate`; `InfraError` marks failures that are not the policy's fault (a trainer
masks them instead of learning from a fake zero reward).
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every error raised by verifiers."""


class ConfigError(Error, ValueError):
    """The environment, dataset, rubric or command line is configured wrongly."""


class MissingKeyError(ConfigError, KeyError):
    """A required environment variable (an API key, usually) is not set."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class EnvironmentLoadError(Error, ImportError):
    """`load_environment` could not find or import an environment."""


class InfraError(Error):
    """A failure of infrastructure (endpoint, sandbox, network), not of the policy."""


class ModelError(Error):
    """The model endpoint failed or answered with something unusable."""


class ModelConnectionError(ModelError, InfraError):
    """The endpoint could not be reached or kept failing after retries (429/5xx/timeouts)."""


class EndpointUnreachableError(ModelConnectionError):
    """Nothing answers at the endpoint's address (connection refused, or, when checked before a
    run, an unknown host): not retried, since waiting does not start a server; a client over
    several endpoints skips the one that raised it."""


class InvalidModelResponseError(ModelError):
    """The endpoint answered, but the reply is not a usable chat completion."""


class EmptyModelResponseError(InvalidModelResponseError):
    """The reply has no choices, or a message with neither content nor tool calls."""


class OverlongPromptError(ModelError):
    """The prompt does not fit the model's context window."""


class ToolError(Error):
    """A tool call could not be parsed or executed."""


class ToolParseError(ToolError):
    """A tool call's arguments are not valid JSON for the tool."""


class ToolCallError(ToolError):
    """A tool raised while running."""


class SandboxError(InfraError):
    """A sandbox could not be created, used or destroyed."""


class ClusterError(InfraError):
    """The Ray cluster failed the run: its head cannot be reached, or a node or an actor that
    held work was lost."""


class ClusterUnreachableError(ClusterError, ConnectionError):
    """Nothing answers at the Ray head's address (or no cluster runs for `address="auto"`)."""


class WorkerLostError(ClusterError):
    """An actor (an environment worker, a sandbox host, an env server) or its node died while
    it held work; the rollouts it was running are recorded with this error, or retried
    elsewhere where that is safe and configured."""


class TunnelError(InfraError):
    """A tunnel to a remote service failed."""


class EnvResponseError(Error):
    """The environment's own code (`setup_state`, `env_response`, a stop condition) raised."""


class RewardError(Error):
    """A reward function raised or returned something that is not a number."""


class TrainingDataError(Error):
    """A rollout lacks the token data a trainer needs (the server returned no token ids)."""
