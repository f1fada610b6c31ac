"""Rendering of the simple repository API: PEP 503 HTML and PEP 691 JSON (api-version 1.1).

Carries PEP 658/714 core-metadata hashes, PEP 592 yanked reasons, PEP 700 ``versions``,
``size`` and ``upload-time``, and ``#sha256=`` fragments on every file URL.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

API_VERSION = "1.1"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "application/vnd.pypi.simple.v1+html"
_OFFERED = {
    JSON_TYPE: "json",
    HTML_TYPE: "html",
    "text/html": "html",
    "application/vnd.pypi.simple.latest+json": "json",
    "application/vnd.pypi.simple.latest+html": "html",
}


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str
    sha256: str
    size: int
    upload_time: dt.datetime
    requires_python: str | None
    metadata_sha256: str | None
    yanked: bool
    yanked_reason: str


def negotiate(accept: str | None, fmt: str | None = None) -> tuple[str, str] | None:
    """Pick (format, content type) from a ``format`` parameter or the Accept header (PEP 691).

    Returns None when nothing acceptable is offered (the caller answers 406).
    """
    if fmt:
        if fmt in _OFFERED:
            return _OFFERED[fmt], fmt
        return None
    if not accept:
        return "html", HTML_TYPE
    best: tuple[float, int, str] | None = None
    for pos, part in enumerate(accept.split(",")):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        q = 1.0
        for f in fields[1:]:
            if f.startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        if q <= 0:
            continue
        if media in _OFFERED:
            choice = media
        elif media in ("*/*", "text/*", "application/*"):
            choice = HTML_TYPE if media != "application/*" else JSON_TYPE
        else:
            continue
        key = (q, -pos, choice)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        return None
    ctype = best[2]
    return _OFFERED[ctype], ("text/html" if ctype == "text/html" else ctype)


def _iso(t: dt.datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


PASS_THROUGH_KEY = "_upstream-pass-through"  # PEP 691 private meta key: names not hosted here
# are answered with the upstream index's page (clients such as `prime env install` read it)


def project_page_json(
    name: str, versions: Sequence[str], files: Sequence[IndexFile], pass_through: bool
) -> bytes:
    out = []
    for f in files:
        item: dict[str, object] = {
            "filename": f.filename,
            "url": f.url,
            "hashes": {"sha256": f.sha256},
            "size": f.size,
            "upload-time": _iso(f.upload_time),
            "yanked": (f.yanked_reason or True) if f.yanked else False,
        }
        if f.requires_python:
            item["requires-python"] = f.requires_python
        if f.metadata_sha256:
            item["core-metadata"] = {"sha256": f.metadata_sha256}
            item["dist-info-metadata"] = {"sha256": f.metadata_sha256}
        out.append(item)
    doc = {
        "meta": {"api-version": API_VERSION, PASS_THROUGH_KEY: pass_through},
        "name": name,
        "versions": list(versions),
        "files": out,
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def project_page_html(name: str, files: Sequence[IndexFile]) -> bytes:
    lines = [
        "<!DOCTYPE html>",
        "<html><head>",
        f'<meta name="pypi:repository-version" content="{API_VERSION}">',
        f"<title>Links for {escape(name)}</title></head><body>",
        f"<h1>Links for {escape(name)}</h1>",
    ]
    for f in files:
        attrs = [f'href="{escape(f.url)}#sha256={f.sha256}"']
        if f.requires_python:
            attrs.append(f'data-requires-python="{escape(f.requires_python)}"')
        if f.metadata_sha256:
            attrs.append(f'data-core-metadata="sha256={f.metadata_sha256}"')
            attrs.append(f'data-dist-info-metadata="sha256={f.metadata_sha256}"')
        if f.yanked:
            attrs.append(f'data-yanked="{escape(f.yanked_reason)}"')
        lines.append(f"<a {' '.join(attrs)}>{escape(f.filename)}</a><br>")
    lines.append("</body></html>")
    return ("\n".join(lines) + "\n").encode()


def root_page_json(names: Sequence[str], pass_through: bool) -> bytes:
    doc = {
        "meta": {"api-version": API_VERSION, PASS_THROUGH_KEY: pass_through},
        "projects": [{"name": n} for n in names],
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def root_page_html(names: Sequence[str], prefix: str) -> bytes:
    body = "\n".join(f'<a href="{escape(prefix)}{escape(n)}/">{escape(n)}</a><br>' for n in names)
    return (
        "<!DOCTYPE html>\n<html><head>"
        f'<meta name="pypi:repository-version" content="{API_VERSION}">'
        "<title>Simple index</title></head><body>\n"
        f"{body}\n</body></html>\n"
    ).encode()
