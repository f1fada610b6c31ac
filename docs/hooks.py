"""MkDocs hooks: reference pages generated from the code itself, so they cannot drift.

Markers in a page are replaced at build time:

- ``<!-- generated: cli PROGRAM [SUBCOMMAND ...] -->``: that command's ``--help`` output;
- ``<!-- generated: hub-api -->``: the prime-hub HTTP endpoints from its OpenAPI schema
  (the full schema is published as ``reference/openapi.json``);
- ``<!-- generated: environments -->``: the README of every package under ``environments/``;
- ``<!-- generated: hub-settings -->``: prime-hub's settings with their defaults.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- generated: (?P<kind>[\w-]+)(?P<args>[^>]*?)\s*-->")
HTTP_METHODS = ("get", "post", "put", "patch", "delete")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return MARKER.sub(lambda m: _expand(m["kind"], m["args"].split()), markdown)


def on_files(files: Any, config: Any, **_: Any) -> Any:
    from mkdocs.structure.files import File

    schema = json.dumps(_openapi(), indent=2, sort_keys=True)
    files.append(File.generated(config, "reference/openapi.json", content=schema))
    return files


def _expand(kind: str, args: list[str]) -> str:
    if kind == "cli":
        return _cli_help(tuple(args))
    if kind == "hub-api":
        return _hub_api()
    if kind == "environments":
        return _environments()
    if kind == "hub-settings":
        return _hub_settings()
    raise ValueError(f"unknown generated block {kind!r}")


@cache
def _cli_help(argv: tuple[str, ...]) -> str:
    program = Path(sys.executable).parent / argv[0]
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    proc = subprocess.run(
        [str(program), *argv[1:], "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} --help failed: {proc.stderr}")
    return f"```text\n$ {' '.join(argv)} --help\n{proc.stdout.rstrip()}\n```\n"


@cache
def _openapi() -> dict[str, Any]:
    from prime_hub.app import create_app
    from prime_hub.settings import Settings

    with tempfile.TemporaryDirectory() as data:
        app = create_app(Settings(data_dir=Path(data)))
        schema = app.openapi()
        app.state.hub.db.dispose()
    return schema


def _hub_api() -> str:
    schema = _openapi()
    rows = ["| method | path | what |", "|---|---|---|"]
    for path, ops in schema["paths"].items():
        for method in HTTP_METHODS:
            op = ops.get(method)
            if op is not None:
                summary = (op.get("summary") or "").replace("|", "\\|")
                rows.append(f"| `{method.upper()}` | `{path}` | {summary} |")
    version = schema.get("info", {}).get("version", "")
    return f"prime-hub {version}: {len(rows) - 2} operations.\n\n" + "\n".join(rows) + "\n"


def _hub_settings() -> str:
    from prime_hub.settings import Settings

    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = "" if field.default is None else f"`{field.default}`"
        doc = (field.description or "").replace("|", "\\|")
        rows.append(f"| `PRIME_HUB_{name.upper()}` | {default} | {doc} |")
    return "\n".join(rows) + "\n"


def _environments() -> str:
    parts = []
    for readme in sorted((ROOT / "environments").glob("*/README.md")):
        text = readme.read_text()
        # Demote headings one level, and turn repository-relative links into plain text
        # (they point at files outside the site).
        text = re.sub(r"^(#{1,5}) ", r"#\1 ", text, flags=re.MULTILINE)
        text = re.sub(r"\[([^\]]+)\]\((?!https?://|#)([^)]+)\)", r"\1 (`\2`)", text)
        parts.append(f"<!-- {readme.parent.name} -->\n{text.strip()}\n")
    if not parts:
        return "_No reference environments are in this checkout._\n"
    return "\n---\n\n".join(parts)
