"""The errors of `verifiers.utils.process_pool` (which exports them), in a module of their own
so that the worker side (`verifiers.utils.pool_workers`) raises them without importing the
pool."""

from __future__ import annotations

from verifiers.errors import Error, InfraError

__all__ = [
    "PoolClosedError",
    "PoolError",
    "PoolOverloadedError",
    "WorkerCrashedError",
    "WorkerStartError",
    "WorkerTimeoutError",
]


class PoolError(Error):
    """Base class of process-pool failures."""


class PoolClosedError(PoolError):
    """The pool was closed before or while the call ran."""


class PoolOverloadedError(PoolError, InfraError):
    """Too many calls are already waiting for a worker."""


class WorkerTimeoutError(PoolError, TimeoutError):
    """The call ran past its hard timeout; its worker was killed and will be replaced."""


class WorkerCrashedError(PoolError, InfraError):
    """The worker process died during the call (segfault, ``os._exit``, OOM kill)."""


class WorkerStartError(WorkerCrashedError):
    """A worker could not be started or its initializer failed."""
