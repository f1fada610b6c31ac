"""Evaluation results of environment versions, and their rollouts (JSON API)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from verifiers_viewer import Filters
from verifiers_viewer.query import METRIC_SORT_PREFIX, SORT_COLUMNS

from ..deps import hub_of, principal_async, principal_sync
from ..errors import BadRequest, NotFound, TooLarge
from ..evals import EvalResults, EvalSubmission, eval_view
from ..rollouts import RolloutStore
from ..rollouts_viewer import row_view
from ..uploads import refuse_declared_length, upload_route

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


# ------------------------------------------------------------------ rollouts
FEED_BYTES = 1024 * 1024  # body bytes handed to the checking/compressing thread at once


def _store(request: Request) -> RolloutStore:
    store: RolloutStore = request.app.state.rollouts
    return store


@router.put(
    "/environments/{owner}/{name}/evals/{eval_id}/rollouts",
    summary="Push an evaluation's rollouts: its results.jsonl as the body (gzip allowed)",
    status_code=201,
)
@upload_route
async def push_rollouts(request: Request, owner: str, name: str, eval_id: int) -> JSONResponse:
    store = _store(request)
    principal = await principal_async(request)
    # who may push is settled before a byte of the body is read
    row = await run_in_threadpool(store.check_push, principal, owner, name, eval_id)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "gzip"):
        raise BadRequest(f"rollouts are sent plain or with Content-Encoding: gzip, not {encoding}")
    limit = hub_of(request).settings.max_rollouts_bytes
    refuse_declared_length(request, limit)  # compressed or not, the body is at most the cap
    with store.spool() as spool:
        sink = store.sink(spool, gzipped=encoding == "gzip")
        try:
            seen, batch = 0, bytearray()
            async for chunk in request.stream():
                seen += len(chunk)
                if seen > limit:
                    raise TooLarge(f"the rollouts body exceeds this hub's limit of {limit} bytes")
                batch += chunk
                if len(batch) >= FEED_BYTES:
                    await run_in_threadpool(sink.feed, bytes(batch))
                    batch.clear()
            await run_in_threadpool(sink.feed, bytes(batch))
            fresh = await run_in_threadpool(store.attach, row, sink)
        finally:
            sink.close()
    return JSONResponse(eval_view(fresh), status_code=201)


@router.get(
    "/environments/{owner}/{name}/evals/{eval_id}/rollouts",
    summary="An evaluation's rollouts: filtered, sorted, a page at a time (from its index)",
    description="Filters are the rollout viewer's, one query parameter each; ``error`` is an "
    "error type, 'any' (failed) or 'none' (no error).",
)
def list_rollouts(
    request: Request,
    owner: str,
    name: str,
    eval_id: int,
    filters: Annotated[Filters, Depends()],  # one query parameter per field
    sort: str = Query(default="line", description="a column, or metric:<name>"),
    order: Literal["asc", "desc"] = "asc",
    limit: int = Query(default=50, ge=1, le=1000),
    offset: int = Query(default=0, ge=0),
) -> dict[str, Any]:
    if sort not in SORT_COLUMNS and not sort.startswith(METRIC_SORT_PREFIX):
        raise BadRequest(
            f"sort by one of {', '.join(SORT_COLUMNS)} or {METRIC_SORT_PREFIX}<name>, not {sort!r}"
        )
    store = _store(request)
    row = store.readable(principal_sync(request), eval_id, owner, name)
    index = store.index(row)
    rows = index.rows(filters, sort=sort, descending=order == "desc", offset=offset, limit=limit)
    return {
        "eval_id": eval_id,
        "total": index.count(filters),
        "offset": offset,
        "limit": limit,
        "rollouts": [row_view(r) for r in rows],
    }


@router.get(
    "/environments/{owner}/{name}/evals/{eval_id}/rollouts/{line}",
    summary="One rollout's full record (line: its place in the run, from 0)",
)
def get_rollout(request: Request, owner: str, name: str, eval_id: int, line: int) -> Response:
    store = _store(request)
    row = store.readable(principal_sync(request), eval_id, owner, name)
    index = store.index(row)
    found = index.row(line) if line >= 0 else None
    if found is None:
        raise NotFound(f"evaluation {eval_id} has no rollout {line}")
    body = {**row_view(found), "record": index.record(line)}
    # orjson: a record may hold megabytes of completion; no pydantic round trip for it
    return Response(orjson.dumps(body), media_type="application/json")
