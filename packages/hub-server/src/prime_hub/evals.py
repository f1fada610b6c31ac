"""Evaluation results: run summaries attached to an environment version, newest first.

Anyone who can read an environment may attach results with a publish-scoped token (evaluating
someone else's environment is the common case); the submitter or the environment's owners may
delete them. Results are read straight from the database: they never touch the package index.
A result's rollouts, when pushed, are kept by ``rollouts.RolloutStore``; the row links them.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlalchemy import select

from .auth import Principal
from .db.models import EvalResult
from .errors import BadRequest, Forbidden, NotFound, Unauthorized
from .rollouts import rollouts_summary
from .service import Hub
from .views import iso

MAX_DETAILS_BYTES = 64 * 1024

Finite = Annotated[float, Field(allow_inf_nan=False)]


class MemberSummary(BaseModel):
    """One member environment of an `EnvGroup` or mixture run: its rollouts, mean reward and
    the means of the metrics it records (over its own rollouts only)."""

    model_config = ConfigDict(extra="ignore")

    num_rollouts: int = Field(default=0, ge=0)
    avg_reward: Finite | None = None
    avg_metrics: dict[Annotated[str, Field(max_length=200)], Finite | None] = Field(
        default_factory=dict, max_length=200
    )


class EvalDetails(BaseModel):
    """The part of a summary kept in the ``details`` column: what the view may show besides
    the columns. Also re-read from stored rows (``stored_details``), field by field."""

    sampling_args: dict[str, Any] = Field(default_factory=dict)
    env_args: dict[str, Any] = Field(default_factory=dict)
    pass_at_k: dict[str, Finite] = Field(default_factory=dict)
    metrics: dict[str, Finite | None] = Field(default_factory=dict)
    run_id: str | None = Field(default=None, max_length=200)
    verifiers_version: str | None = Field(default=None, max_length=100)
    duration_s: Finite | None = Field(default=None, ge=0)
    #: per member environment of a group or mixture run (vf-eval's ``by_env``)
    by_env: dict[Annotated[str, Field(max_length=200)], MemberSummary] = Field(
        default_factory=dict, max_length=200
    )

    @field_validator("pass_at_k")
    @classmethod
    def _k_is_positive_int(cls, v: dict[str, float]) -> dict[str, float]:
        for k, p in v.items():
            if not k.isdigit() or int(k) < 1:
                raise ValueError(f"pass_at_k keys are positive integers, got {k!r}")
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"pass@{k} must be within [0, 1], got {p}")
        return v


DETAIL_FIELDS = tuple(EvalDetails.model_fields)


class EvalSubmission(EvalDetails):
    """What ``prime eval --push`` sends: the summary of one run (no per-rollout data).

    Exactly these fields: any other is refused (422), never stored. The hub alone sets
    ``id``, ``version`` (the version in the URL, which must exist), ``submitted_by`` and
    ``created_at``; a body could otherwise have spread its own over the stored view."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, max_length=200)
    num_examples: int = Field(ge=0)
    rollouts_per_example: int = Field(default=1, ge=1)
    reward_mean: Finite | None = None
    reward_std: Finite | None = Field(default=None, ge=0)
    num_rollouts: int = Field(ge=0)
    num_errors: int = Field(default=0, ge=0)

    def details(self) -> dict[str, Any]:
        return self.model_dump(include=set(DETAIL_FIELDS))

    def columns(self) -> dict[str, Any]:
        """The fields an `EvalResult` row keeps in columns of their own: all but the details."""
        return self.model_dump(exclude=set(DETAIL_FIELDS))


def stored_details(raw: Any) -> dict[str, Any]:
    """The details of a stored row as the schema allows them: fields outside it, and fields
    that do not validate (rows stored before pushes were validated), are left out, so no
    stored row can break a page or forge the view's own fields."""
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Any] = {}
    for key in DETAIL_FIELDS:
        if key not in raw:
            continue
        try:
            checked = EvalDetails.model_validate({key: raw[key]})
            out[key] = checked.model_dump(include={key})[key]  # plain values, as stored
        except ValidationError:
            continue
    return out


def _check_size(value: Any) -> None:
    try:
        data = orjson.dumps(value)
    except TypeError as e:
        raise BadRequest(f"evaluation details are not JSON: {e}") from None
    if len(data) > MAX_DETAILS_BYTES:
        raise BadRequest(f"evaluation details exceed {MAX_DETAILS_BYTES} bytes")


def eval_view(e: EvalResult) -> dict[str, Any]:
    """A result as the API and pages show it: the columns, then the validated details; the
    identifying fields come from the row and its version alone."""
    return {
        **stored_details(e.details),
        "id": e.id,
        "version": e.version.version,
        "model": e.model,
        "reward_mean": e.reward_mean,
        "reward_std": e.reward_std,
        "num_examples": e.num_examples,
        "rollouts_per_example": e.rollouts_per_example,
        "num_rollouts": e.num_rollouts,
        "num_errors": e.num_errors,
        "submitted_by": e.submitter.slug if e.submitter else None,
        "created_at": iso(e.created_at),
        "rollouts": rollouts_summary(e),
    }


class EvalResults:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def submit(
        self, principal: Principal, owner: str, name: str, version: str, sub: EvalSubmission
    ) -> EvalResult:
        env = self.hub.queries.get_environment(principal, owner, name)
        if principal.user is None:
            raise Unauthorized("pushing evaluation results needs an API token")
        if not principal.can_submit_eval(env):
            raise Forbidden(
                f"this token may not attach results to {owner}/{name} (needs publish scope)"
            )
        if sub.num_errors > sub.num_rollouts:
            raise BadRequest("num_errors cannot exceed num_rollouts")
        ver = self.hub.queries.find_version(env, version)
        details = sub.details()
        _check_size(details)
        with self.hub.db.writer.begin() as s:
            row = EvalResult(
                environment_id=env.id,
                version_id=ver.id,
                submitter_id=principal.user.id,
                details=details,
                **sub.columns(),
            )
            s.add(row)
            s.flush()
            row_id = row.id
        return self._get(row_id)

    def list(
        self,
        principal: Principal,
        owner: str,
        name: str,
        *,
        version: str | None = None,
        model: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[EvalResult]:
        env = self.hub.queries.get_environment(principal, owner, name)
        query = select(EvalResult).where(EvalResult.environment_id == env.id)
        if version is not None:
            query = query.where(
                EvalResult.version_id == self.hub.queries.find_version(env, version).id
            )
        if model is not None:
            query = query.where(EvalResult.model == model)
        query = query.order_by(EvalResult.created_at.desc(), EvalResult.id.desc())
        with self.hub.db.reader() as s:
            return list(s.scalars(query.limit(limit).offset(offset)).unique())

    def delete(self, principal: Principal, owner: str, name: str, eval_id: int) -> None:
        env = self.hub.queries.get_environment(principal, owner, name)
        if principal.user is None:
            raise Unauthorized("deleting evaluation results needs an API token")
        with self.hub.db.writer.begin() as s:
            row = s.get(EvalResult, eval_id)
            if row is None or row.environment_id != env.id:
                raise NotFound(f"evaluation {eval_id} of {owner}/{name} not found")
            mine = row.submitter_id == principal.user.id and principal.can_submit_eval(env)
            if not (mine or principal.can_publish(env.owner, env.name)):
                raise Forbidden(f"only the submitter or the owners of {owner}/{name} may delete it")
            stored = row.rollouts_key
            s.delete(row)
        if stored:  # after the row is gone: nothing can point at the object any more
            self.hub.storage.delete(stored)

    def _get(self, eval_id: int) -> EvalResult:
        with self.hub.db.reader() as s:
            row = s.get(EvalResult, eval_id)
            assert row is not None
            return row
