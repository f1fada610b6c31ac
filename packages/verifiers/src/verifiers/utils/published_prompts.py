"""Published prompts, loaded at run time from where their authors publish them.

A benchmark's numbers are reproduced with the benchmark's own prompt (a judge prompt, a system
message, an answer format), but that text belongs to its authors and does not belong in this
repository. An environment therefore ships a prompt of its own as the default and names where
the official one is published; `load_published_prompt` fetches it when asked:

* ``PromptSource(package=..., name=...)``: an installed package: import the module and read a
  string attribute (``name`` may be dotted, ``"PromptConstants.SYSTEM_MESSAGE"``).
* ``PromptSource(url=..., name=...)``: a published file fetched over HTTP(S) (or read from a
  ``file://`` URL). For a ``.py`` file ``name`` is a top-level string constant (or a class's
  attribute), read with ``ast`` — the file is never executed. For a ``.json`` file ``key`` is
  a dotted path into it; for anything else (or without ``name`` / ``key``) the whole text.
* ``PromptSource(dataset=..., field=...)``: a field of one row of a Hugging Face dataset (or
  of a local dataset file or folder).

What an http(s) URL or a dataset source gave is kept in an on-disk cache (``$VF_PROMPT_CACHE``, else
``$XDG_CACHE_HOME/verifiers/published_prompts``, else ``~/.cache/...``), so a later offline
run reuses it; pin URLs to a commit so the cached text cannot go stale. Entries are written
atomically under unpredictable temporary names and never read or written through a link; a
damaged entry is fetched again. When no source can be read, the error says why for each one
and what to do instead (install the package, allow network access, or pass the template text
itself), a `ConfigError`, never a silent fallback.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from verifiers.errors import ConfigError

__all__ = [
    "OFFICIAL",
    "PromptSource",
    "load_published_prompt",
    "prompt_cache_dir",
    "python_constant",
    "rename_placeholders",
    "resolve_prompt",
]

#: The argument value that asks an environment for the published prompt.
OFFICIAL = "official"
_SPEC_KEYS = {
    "package",
    "url",
    "dataset",
    "name",
    "key",
    "config",
    "split",
    "field",
    "row",
    "placeholders",
    "install",
}


@dataclasses.dataclass(frozen=True)
class PromptSource:
    """Where one published prompt text lives. Exactly one of ``package``, ``url`` and
    ``dataset`` is given.

    Args:
        package: an importable module holding the text (``"hle_eval.run_judge_results"``).
        url: a published file (``https://`` / ``http://`` / ``file://``).
        dataset: a Hugging Face dataset id, or a local dataset file / folder.
        name: the attribute (package) or top-level string constant (``.py`` URL); dotted for
            a class attribute.
        key: a dotted key path into a ``.json`` file (integers index lists).
        config: for a dataset: its config.
        split: for a dataset: its split.
        row: for a dataset: the row index.
        field: for a dataset: the column holding the text.
        placeholders: renames applied to the loaded template, ``{"theirs": "ours"}``:
            ``{theirs}`` becomes ``{ours}`` (``{{`` / ``}}`` escapes are left alone).
        install: what to install for a package source (shown in the error), e.g.
            ``"pip install hle-eval"``.
    """

    package: str | None = None
    url: str | None = None
    dataset: str | None = None
    name: str | None = None
    key: str | None = None
    config: str | None = None
    split: str = "train"
    row: int = 0
    field: str | None = None
    placeholders: Mapping[str, str] = dataclasses.field(default_factory=dict)
    install: str | None = None

    def __post_init__(self) -> None:
        given = [k for k in ("package", "url", "dataset") if getattr(self, k)]
        if len(given) != 1:
            raise ConfigError(
                "a prompt source names exactly one of package, url or dataset; got "
                + (", ".join(given) or "none")
            )
        if self.package and not self.name:
            raise ConfigError(f"prompt source package {self.package!r} needs the attribute name")
        if self.dataset and not self.field:
            raise ConfigError(f"prompt source dataset {self.dataset!r} needs the field to read")
        if isinstance(self.row, bool) or not isinstance(self.row, int) or self.row < 0:
            raise ConfigError(f"prompt source row must be an index >= 0, got {self.row!r}")
        if not isinstance(self.placeholders, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.placeholders.items()
        ):
            raise ConfigError("prompt source placeholders must map names to names")

    @classmethod
    def from_spec(cls, spec: PromptSource | Mapping[str, Any]) -> PromptSource:
        """A source from its JSON form (what an environment argument carries)."""
        if isinstance(spec, PromptSource):
            return spec
        if not isinstance(spec, Mapping):
            raise ConfigError(f"a prompt source is a mapping, got {type(spec).__name__}")
        unknown = set(spec) - _SPEC_KEYS
        if unknown:
            raise ConfigError(
                f"unknown prompt source keys {sorted(unknown)}; known: {sorted(_SPEC_KEYS)}"
            )
        return cls(**dict(spec))

    def describe(self) -> str:
        what = self.name or self.key or self.field
        if self.package:
            return f"package {self.package} ({self.name})"
        if self.url:
            return f"{self.url}" + (f" ({what})" if what else " (whole file)")
        split = f"{self.config + '/' if self.config else ''}{self.split}"
        return f"dataset {self.dataset} {split} row {self.row} ({self.field})"

    def cache_key(self) -> str:
        """What identifies the loaded text (placeholder renames are applied after)."""
        ident = {
            k: getattr(self, k)
            for k in ("url", "dataset", "name", "key", "config", "split", "row", "field")
        }
        digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
        return digest[:32]


def prompt_cache_dir() -> Path:
    """Where fetched prompt texts are kept (see the module docstring)."""
    explicit = os.environ.get("VF_PROMPT_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "verifiers" / "published_prompts"


# -- reading one source ----------------------------------------------------------------------
class _Unavailable(Exception):
    """This source cannot be read here (not installed, unreachable): try the next one."""


def _read_package(src: PromptSource) -> str:
    import importlib

    hint = f"; {src.install}" if src.install else ""
    try:
        module = importlib.import_module(src.package or "")
    except ImportError as e:
        raise _Unavailable(f"not installed ({e}){hint}") from None
    except Exception as e:  # installed but fails to import here (e.g. reads files by CWD)
        raise _Unavailable(f"cannot be imported ({type(e).__name__}: {e}){hint}") from None
    value: Any = module
    for part in (src.name or "").split("."):
        if not hasattr(value, part):
            raise ConfigError(f"{src.describe()}: the package has no attribute {src.name!r}")
        value = getattr(value, part)
    if not isinstance(value, str):
        raise ConfigError(f"{src.describe()}: {src.name!r} is a {type(value).__name__}, not text")
    return value


def _fetch(url: str, timeout: float) -> str:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        try:
            return Path(unquote(parsed.path)).read_text(encoding="utf-8")
        except OSError as e:
            raise _Unavailable(f"cannot read it ({e})") from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"prompt source url {url!r} is not UTF-8 text ({e})") from None
    if parsed.scheme not in ("http", "https"):
        raise ConfigError(f"prompt source url {url!r}: only http(s) and file URLs are read")
    import httpx

    try:
        reply = httpx.get(url, timeout=timeout, follow_redirects=True)
    except httpx.HTTPError as e:
        raise _Unavailable(f"unreachable ({type(e).__name__}: {e})") from None
    if reply.status_code != 200:
        raise _Unavailable(f"HTTP {reply.status_code}")
    return reply.text


def _string_value(node: ast.AST) -> str | None:
    """The text of a constant string expression: a literal (implicitly concatenated or not),
    an f-string without fields, or a `+` of those. Anything computed is None.

    Walked with an explicit stack, not recursion: a published file's `"a" + "a" + ...` chain
    is as deep as it is long."""
    parts: list[str] = []
    pending: list[ast.AST] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Constant) and isinstance(current.value, str):
            parts.append(current.value)
        elif isinstance(current, ast.JoinedStr):
            pending.extend(reversed(current.values))
        elif isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
            pending.extend((current.right, current.left))  # the left side is read first
        else:
            return None
    return "".join(parts)


def _assigned(body: list[ast.stmt], name: str) -> ast.AST | None:
    """The value last assigned to ``name`` in ``body`` (a module or class body)."""
    found: ast.AST | None = None
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                found = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            if isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                found = stmt.value
        elif isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name == name:
                found = stmt
    return found


def python_constant(source: str, name: str, where: str = "the file") -> str:
    """The string constant ``name`` (dotted for a class attribute) of Python ``source``,
    found with ``ast`` without running the code."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise ConfigError(f"{where} is not valid Python ({e})") from None
    except ValueError as e:  # Python 3.11: "source code string cannot contain null bytes"
        raise ConfigError(f"{where} is not valid Python ({e})") from None
    except (RecursionError, MemoryError):  # the parser gives up on an expression this deep
        raise ConfigError(
            f"{where} is nested too deeply to read without running it; pass the text itself"
        ) from None
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    parts = name.split(".")
    for i, part in enumerate(parts):
        node = _assigned(body, part)
        if node is None:
            raise ConfigError(f"{where} defines no {'.'.join(parts[: i + 1])!r}")
        if i < len(parts) - 1:
            if not isinstance(node, ast.ClassDef):
                raise ConfigError(f"{where}: {'.'.join(parts[: i + 1])!r} is not a class")
            body = node.body
    text = _string_value(node) if node is not None else None
    if text is None:
        raise ConfigError(f"{where}: {name!r} is not a constant string")
    return text


def _json_key(text: str, key: str, where: str) -> str:
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{where} is not valid JSON ({e})") from None
    except RecursionError:  # the decoder gives up on arrays or objects nested this deep
        raise ConfigError(f"{where} is nested too deeply to read") from None
    for part in key.split("."):
        if (
            isinstance(value, list)
            and part.lstrip("-").isdigit()
            and -len(value) <= int(part) < len(value)
        ):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise ConfigError(f"{where} has no key {key!r} (stopped at {part!r})")
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key!r} is a {type(value).__name__}, not text")
    return value


def _read_url(src: PromptSource, timeout: float) -> str:
    text = _fetch(src.url or "", timeout)
    where = src.url or ""
    path = urlparse(where).path
    if src.name:
        if not path.endswith(".py"):
            raise ConfigError(f"prompt source {where}: 'name' reads a .py file; use 'key' for JSON")
        return python_constant(text, src.name, where)
    if src.key:
        return _json_key(text, src.key, where)
    return text


def _read_dataset(src: PromptSource) -> str:
    from verifiers.data_sources import load_dataset_source

    local = Path(src.dataset or "").expanduser()
    try:
        if local.exists():
            data = load_dataset_source(None, source=local, split=src.split)
        else:
            data = load_dataset_source(
                src.dataset, source="hub", split=src.split, config=src.config
            )
    except ConfigError as e:
        raise _Unavailable(str(e)) from None
    except Exception as e:  # the hub unreachable, a gated dataset, ...
        raise _Unavailable(f"{type(e).__name__}: {e}") from None
    if src.row >= len(data):
        raise ConfigError(f"{src.describe()}: the split has only {len(data)} rows")
    value = data[src.row].get(src.field or "")
    if not isinstance(value, str):
        raise ConfigError(f"{src.describe()}: the field is {type(value).__name__}, not text")
    return value


def _read_cache_entry(path: Path) -> str | None:
    """The text a cache entry holds, or None when there is none to trust: missing, not a
    regular file (a link is never read through: it could point anywhere), or damaged (not
    UTF-8 JSON, not a record, no text). What is None is fetched again and rewritten."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # absent, or a link (ELOOP under O_NOFOLLOW)
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a fifo or device planted at the entry's name
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    text = record.get("text") if isinstance(record, dict) else None
    return text if isinstance(text, str) else None


def _write_cache_entry(path: Path, record: dict[str, str]) -> None:
    """Replace the entry at ``path`` atomically. The temporary file gets an unpredictable name
    created exclusively (``mkstemp``: ``O_CREAT | O_EXCL``, so a link planted in the folder is
    never opened), and the rename replaces whatever sits at ``path``, a link included, without
    writing through it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _cached(src: PromptSource, refresh: bool, timeout: float) -> str:
    if src.url and urlparse(src.url).scheme == "file":
        return _read_url(src, timeout)  # a local file is always at hand: never a stale copy
    path = prompt_cache_dir() / f"{src.cache_key()}.json"
    if not refresh:
        text = _read_cache_entry(path)
        if text is not None:
            return text
    text = _read_url(src, timeout) if src.url else _read_dataset(src)
    try:
        _write_cache_entry(path, {"source": src.describe(), "text": text})
    except OSError:
        pass  # a read-only cache (or a folder at the entry's name) only costs a fetch next time
    return text


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def rename_placeholders(template: str, renames: Mapping[str, str]) -> str:
    """``{old}`` -> ``{new}`` for each rename; ``{{`` / ``}}`` escapes stay as they are."""
    if not renames:
        return template

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        return "{" + renames[name] + "}" if name in renames else m.group(0)

    return _PLACEHOLDER.sub(sub, template)


def _placeholders(template: str) -> set[str]:
    return {m.group(1) for m in _PLACEHOLDER.finditer(template) if m.group(1)}


# -- the public entry points -----------------------------------------------------------------
def load_published_prompt(
    sources: PromptSource | Mapping[str, Any] | Sequence[PromptSource | Mapping[str, Any]],
    *,
    what: str = "prompt",
    required: Sequence[str] = (),
    instead: str = "pass the template text itself",
    refresh: bool = False,
    timeout: float = 20.0,
) -> str:
    """The text of a published prompt, from the first of ``sources`` that can be read.

    Each source is a `PromptSource` or its JSON form (a dict with the same keys). Package
    sources are imported; URL and dataset sources come from the on-disk cache when it holds
    them (unless ``refresh``), else are fetched and cached. A source that cannot be read here
    (not installed, unreachable) passes to the next; a source that is read but does not hold
    what it names (no such constant, not text) is an error at once, as is a template lacking
    one of the ``required`` placeholders (after its renames) — a sign the publication changed.

    Raises `ConfigError` naming every source tried and why it failed when none could be
    read; ``what`` names the prompt and ``instead`` the alternative in that message.
    """
    if isinstance(sources, PromptSource | Mapping):
        sources = [sources]
    resolved = [PromptSource.from_spec(s) for s in sources]
    if not resolved:
        raise ConfigError(f"no published source given for the {what}")
    failures = []
    for src in resolved:
        try:
            text = _read_package(src) if src.package else _cached(src, refresh, timeout)
        except _Unavailable as e:
            failures.append(f"{src.describe()}: {e}")
            continue
        text = rename_placeholders(text, src.placeholders)
        missing = [p for p in required if p not in _placeholders(text)]
        if missing:
            raise ConfigError(
                f"the {what} from {src.describe()} lacks the placeholders "
                f"{', '.join('{' + p + '}' for p in missing)}; the publication may have changed"
            )
        return text
    packages = [s.install or f"the package {s.package}" for s in resolved if s.package]
    todo = " or ".join([*(f"install {p}" if not p.startswith("pip") else p for p in packages)])
    if any(not s.package for s in resolved):
        todo = (todo + " or " if todo else "") + "allow network access"
    raise ConfigError(
        f"cannot load the official {what}: " + "; ".join(failures) + f". {todo}, or {instead}"
    )


def resolve_prompt(
    value: Any,
    default: str,
    official: Sequence[PromptSource | Mapping[str, Any]],
    *,
    argument: str,
    required: Sequence[str] = (),
) -> str:
    """An environment's prompt argument, resolved: None gives ``default`` (the environment's
    own wording), ``"official"`` loads ``official``, a source (dict) or a list of sources
    loads those, and any other string is the template itself. ``required`` placeholders
    are checked on loaded templates and on templates passed as text."""
    if value is None:
        return default
    if isinstance(value, str) and value.strip().lower() == OFFICIAL:
        return load_published_prompt(
            official,
            what=argument,
            required=required,
            instead=f"pass the template text as {argument}",
        )
    if isinstance(value, Mapping | PromptSource) or (
        isinstance(value, list | tuple) and value and not isinstance(value[0], str)
    ):
        return load_published_prompt(
            value,
            what=argument,
            required=required,
            instead=f"pass the template text as {argument}",
        )
    if not isinstance(value, str):
        raise ConfigError(
            f"{argument} must be text, {OFFICIAL!r} or a prompt source, got {type(value).__name__}"
        )
    missing = [p for p in required if p not in _placeholders(value)]
    if missing:
        raise ConfigError(
            f"{argument} lacks the placeholders {', '.join('{' + p + '}' for p in missing)}"
        )
    return value
