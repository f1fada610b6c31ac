"""A plain HTML page per environment: description, README, versions, install command."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..deps import base_url, hub_of, principal_sync
from ..names import normalize

router = APIRouter(tags=["web"])


@router.get("/{owner}/{name}", response_class=HTMLResponse, summary="Environment web page")
def page(request: Request, owner: str, name: str) -> HTMLResponse:
    hub = hub_of(request)
    env = hub.get_environment(principal_sync(request), owner, name)
    versions = hub.versions(env)
    index = f"{base_url(request)}/{env.owner.slug}/simple/"
    rows = "".join(
        f"<tr><td>{escape(v.version)}</td><td>{v.created_at:%Y-%m-%d}</td>"
        f"<td>{'yanked: ' + escape(v.yanked_reason) if v.yanked else ''}</td>"
        f"<td>{', '.join(escape(f.filename) for f in v.files)}</td></tr>"
        for v in versions
    )
    tags = ", ".join(escape(t.tag) for t in env.tags)
    html = f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<title>{escape(env.owner.slug)}/{escape(env.name)}</title></head><body>
<h1>{escape(env.owner.slug)}/{escape(env.name)}</h1>
<p>{escape(env.description)}</p><p>Tags: {tags} · {env.visibility} · {env.downloads} downloads</p>
<h2>Install</h2><pre>pip install --index-url {escape(index)} {escape(normalize(env.name))}
uv pip install --index-url {escape(index)} {escape(normalize(env.name))}</pre>
<h2>Versions</h2><table><tr><th>version</th><th>date</th><th></th><th>files</th></tr>{rows}</table>
<h2>README</h2><pre>{escape(env.readme)}</pre>
</body></html>"""
    return HTMLResponse(html)
