"""Evaluation results of environment versions (JSON API)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from ..deps import hub_of, principal_sync
from ..evals import EvalResults, EvalSubmission, eval_view

router = APIRouter(prefix="/api/v1", tags=["evals"])


def _results(request: Request) -> EvalResults:
    return EvalResults(hub_of(request))


@router.post(
    "/environments/{owner}/{name}/versions/{version}/evals",
    summary="Attach an evaluation run's summary to a version",
    status_code=201,
)
def submit_eval(
    request: Request, owner: str, name: str, version: str, body: EvalSubmission
) -> dict[str, Any]:
    row = _results(request).submit(principal_sync(request), owner, name, version, body)
    return eval_view(row)


@router.get("/environments/{owner}/{name}/evals", summary="Evaluation results, newest first")
def list_evals(
    request: Request,
    owner: str,
    name: str,
    version: str | None = None,
    model: str | None = None,
    limit: int = Query(default=100, ge=1, le=1000),
    offset: int = Query(default=0, ge=0),
) -> dict[str, Any]:
    rows = _results(request).list(
        principal_sync(request),
        owner,
        name,
        version=version,
        model=model,
        limit=limit,
        offset=offset,
    )
    return {"evals": [eval_view(r) for r in rows]}


@router.get(
    "/environments/{owner}/{name}/versions/{version}/evals",
    summary="Evaluation results of one version, newest first",
)
def list_version_evals(
    request: Request, owner: str, name: str, version: str, model: str | None = None
) -> dict[str, Any]:
    rows = _results(request).list(
        principal_sync(request), owner, name, version=version, model=model
    )
    return {"evals": [eval_view(r) for r in rows]}


@router.delete(
    "/environments/{owner}/{name}/evals/{eval_id}", summary="Delete an evaluation result"
)
def delete_eval(request: Request, owner: str, name: str, eval_id: int) -> dict[str, Any]:
    _results(request).delete(principal_sync(request), owner, name, eval_id)
    return {"deleted": eval_id}
