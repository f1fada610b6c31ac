"""The public ``prime`` CLI's calls beyond publishing and installing.

* Links: the CLI prints links into Prime Intellect's dashboard (``{frontend}/dashboard/...``);
  with ``PRIME_FRONTEND_URL`` (or ``prime config set-frontend-url``) pointing at this hub they
  redirect to the matching page here.
* ``prime login`` runs a browser challenge flow this hub does not offer; it is answered with
  how to sign in with a token instead, which the CLI prints as is.
* ``prime env secret|var`` and ``prime fork`` manage things of Prime Intellect's hosted
  services; they get a plain answer instead of a bare 404/405.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from ..deps import base_url
from ..errors import HubError

router = APIRouter(tags=["prime-cli compatibility"])


class NotOffered(HubError):
    """A feature of Prime Intellect's hosted platform that this hub does not have."""

    status_code = 501


@router.get("/dashboard/environments/{owner}/{name}", include_in_schema=False)
def environment_link(owner: str, name: str) -> RedirectResponse:
    # `prime env push` prints "View on Environments Hub: {frontend}/dashboard/environments/o/n"
    return RedirectResponse(f"/{quote(owner, safe='')}/{quote(name, safe='')}", status_code=302)


@router.get("/dashboard/environments", include_in_schema=False)
def environments_link() -> RedirectResponse:
    return RedirectResponse("/", status_code=302)


@router.get("/dashboard/tokens", include_in_schema=False)
@router.get("/dashboard/tokens/challenge", include_in_schema=False)
def tokens_link() -> RedirectResponse:
    return RedirectResponse("/settings/tokens", status_code=302)


@router.post("/api/v1/auth_challenge/generate")
def login_challenge(request: Request) -> None:
    """``prime login``: refused with the two ways the CLI takes a token instead."""
    raise NotOffered(
        "this hub has no browser login for the prime CLI. Create an API token at "
        f"{base_url(request)}/settings/tokens, then run `prime config set-api-key <token>` "
        "(or set PRIME_API_KEY=<token>)"
    )


_HOSTED_ONLY = (
    "this hub keeps no per-environment {what}: on Prime Intellect they feed hosted "
    "evaluations and training, which a self-hosted hub does not run. Give your environment "
    "its settings through its own environment variables or load_environment arguments"
)


def _refuse_hosted_only(what: str) -> None:
    """`prime env secret|var` on `what` (the list, and each item): a plain refusal."""

    def refuse(env_id: int, rest: str = "") -> None:
        raise NotOffered(_HOSTED_ONLY.format(what=what))

    base = f"/api/v1/environmentshub/{{env_id:int}}/{what}"
    router.add_api_route(base, refuse, methods=["GET", "POST"], include_in_schema=False)
    router.add_api_route(
        f"{base}/{{rest:path}}",
        refuse,
        methods=["GET", "POST", "PATCH", "DELETE"],
        include_in_schema=False,
    )


_refuse_hosted_only("secrets")
_refuse_hosted_only("variables")


@router.post("/api/v1/environmentshub/{owner}/{name}/fork", include_in_schema=False)
def fork(owner: str, name: str) -> None:
    raise NotOffered(
        "this hub does not fork environments: `prime env pull` it, change the name in "
        "pyproject.toml and `prime env push` it under your own name"
    )
