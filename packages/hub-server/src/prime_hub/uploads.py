"""Receiving upload bodies under the size cap while they stream.

Every upload route reads its body through here: a declared Content-Length over the cap is
refused before a byte is read, and a body without one (chunked) is counted as it arrives and
refused with 413 the moment it passes the cap, so no more than cap + one chunk is ever read
or written. Bytes are spooled under ``<data dir>/spool`` (never the host's temp dir), where
``prime-hub admin gc`` removes what a killed process leaves.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ParamSpec

import anyio.to_thread
from fastapi import Request
from fastapi.responses import JSONResponse
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from .errors import BadRequest, HubError, TooLarge
from .settings import Settings

SPOOL = "spool"
FIELD_LIMIT = 1024 * 1024  # one non-file form field (twine sends the README as one)
FIELDS_LIMIT = 2 * 1024 * 1024  # all of them together


P = ParamSpec("P")


def upload_route(fn: Callable[P, Awaitable[Any]]) -> Callable[P, Awaitable[Any]]:
    """For routes that take an upload body: an error answered before the body was read to
    its end also closes the connection. Otherwise the server would go on reading, and
    throwing away, everything the client still sends (a chunked flood never ends)."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return await fn(*args, **kwargs)
        except HubError as exc:
            return closing_error(exc)

    return wrapper


def closing_error(exc: HubError) -> JSONResponse:
    """The app's error shape, plus Connection: close (see ``upload_route``)."""
    return JSONResponse(
        {"detail": exc.detail}, status_code=exc.status_code, headers={"Connection": "close"}
    )


SMALL_FORM_TYPES = ("", "application/x-www-form-urlencoded")


async def small_form_request(request: Request, limit: int) -> Request:
    """For routes whose form is a few short fields (the web pages): only urlencoded bodies
    of at most ``limit`` bytes, read here under the cap and handed on in memory. (A
    multipart body would otherwise be parsed by Starlette, its files spooled without limit
    to the host's temp dir.)"""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype not in SMALL_FORM_TYPES:
        raise BadRequest("this form takes application/x-www-form-urlencoded")
    refuse_declared_length(request, limit)
    chunks: list[bytes] = []
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise TooLarge(f"form body exceeds {limit} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    replayed = False

    async def receive() -> dict[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return dict(await request.receive())  # then whatever comes next (a disconnect)

    return Request(request.scope, receive)


def spool_root(settings: Settings) -> Path:
    return (settings.data_dir / SPOOL).resolve()


class SpoolDir:
    """A private directory under the spool area, removed on exit (a crash leaves it to gc)."""

    def __init__(self, settings: Settings) -> None:
        root = spool_root(settings)
        root.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(dir=root, prefix="up-"))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def refuse_declared_length(request: Request, limit: int) -> None:
    """413 before reading anything when the client declares a body over ``limit``."""
    length = request.headers.get("content-length")
    if length and length.strip().isdigit() and int(length) > limit:
        raise TooLarge(f"request body of {length} bytes exceeds the upload limit of {limit}")


def multipart_body_limit(file_limit: int, max_files: int) -> int:
    """The most a form of ``max_files`` files, each at most ``file_limit``, can take."""
    return max_files * file_limit + FIELDS_LIMIT + 64 * 1024  # + part headers and boundaries


async def receive_body(request: Request, dest: Path, limit: int) -> tuple[int, str]:
    """Stream the raw body to ``dest``; (size, sha256). TooLarge as soon as it passes ``limit``."""
    refuse_declared_length(request, limit)
    digest = hashlib.sha256()
    size = 0
    out = await anyio.open_file(dest, "wb")
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"upload exceeds the limit of {limit} bytes")
            digest.update(chunk)
            await out.write(chunk)
    finally:
        await out.aclose()
    return size, digest.hexdigest()


@dataclass
class ReceivedFile:
    field: str
    filename: str
    path: Path
    size: int


@dataclass
class ReceivedForm:
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: list[ReceivedFile] = field(default_factory=list)

    def get(self, name: str) -> str | None:
        values = self.fields.get(name)
        return values[0] if values else None

    def getlist(self, name: str) -> list[str]:
        return list(self.fields.get(name, []))

    def files_named(self, name: str) -> list[ReceivedFile]:
        return [f for f in self.files if f.field == name]


class _FormSink:
    """python-multipart callbacks: file parts straight to spool files, counted per part."""

    def __init__(self, spool: Path, file_limit: int, max_files: int, max_fields: int) -> None:
        self.spool = spool
        self.file_limit = file_limit
        self.max_files = max_files
        self.max_fields = max_fields
        self.form = ReceivedForm()
        self.field_bytes = 0
        self._header_name = bytearray()
        self._header_value = bytearray()
        self._headers: dict[bytes, bytes] = {}
        self._name = ""
        self._file: ReceivedFile | None = None
        self._fh: BinaryIO | None = None
        self._value = bytearray()

    def callbacks(self) -> dict[str, object]:
        return {
            "on_part_begin": self._part_begin,
            "on_header_field": lambda d, a, b: self._header_name.extend(d[a:b]),
            "on_header_value": lambda d, a, b: self._header_value.extend(d[a:b]),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
        }

    def _part_begin(self) -> None:
        self._headers = {}
        self._file = None
        self._value = bytearray()

    def _header_end(self) -> None:
        self._headers[bytes(self._header_name).lower()] = bytes(self._header_value)
        self._header_name.clear()
        self._header_value.clear()

    def _headers_finished(self) -> None:
        disposition, params = parse_options_header(self._headers.get(b"content-disposition"))
        if disposition != b"form-data" or b"name" not in params:
            raise BadRequest("a form part has no Content-Disposition: form-data name")
        self._name = params[b"name"].decode("utf-8", "replace")
        if b"filename" in params:
            if len(self.form.files) >= self.max_files:
                raise BadRequest(f"too many files in one upload (at most {self.max_files})")
            name = params[b"filename"].decode("utf-8", "replace")
            path = self.spool / f"{len(self.form.files)}.part"
            self._file = ReceivedFile(self._name, name, path, 0)
            self._fh = open(path, "wb")
        elif sum(len(v) for v in self.form.fields.values()) >= self.max_fields:
            raise BadRequest(f"too many form fields (at most {self.max_fields})")

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        n = end - start
        if self._file is not None and self._fh is not None:
            self._file.size += n
            if self._file.size > self.file_limit:
                raise TooLarge(
                    f"{self._file.filename} is larger than the upload limit of "
                    f"{self.file_limit} bytes"
                )
            self._fh.write(data[start:end])
            return
        self.field_bytes += n
        if len(self._value) + n > FIELD_LIMIT or self.field_bytes > FIELDS_LIMIT:
            raise TooLarge(f"the form field {self._name!r} is too large")
        self._value.extend(data[start:end])

    def _part_end(self) -> None:
        if self._file is not None:
            self.close()
            self.form.files.append(self._file)
            self._file = None
        else:
            self.form.fields.setdefault(self._name, []).append(
                self._value.decode("utf-8", "replace")
            )

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


async def receive_form(
    request: Request, spool: Path, *, file_limit: int, max_files: int, max_fields: int
) -> ReceivedForm:
    """Parse a multipart/form-data body as it streams, file parts into ``spool``."""
    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if ctype != b"multipart/form-data" or not boundary:
        raise BadRequest("the upload must be multipart/form-data")
    limit = multipart_body_limit(file_limit, max_files)
    refuse_declared_length(request, limit)
    sink = _FormSink(spool, file_limit, max_files, max_fields)
    parser = MultipartParser(boundary, sink.callbacks())  # type: ignore[arg-type]
    seen = 0
    try:
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > limit:
                raise TooLarge(f"request body exceeds the upload limit of {limit} bytes")
            if chunk:
                # file writes happen in the callbacks: keep them off the event loop
                await anyio.to_thread.run_sync(parser.write, chunk)
        parser.finalize()
    except FormParserError as exc:
        raise BadRequest(f"malformed multipart body: {exc}") from exc
    finally:
        sink.close()
    return sink.form
