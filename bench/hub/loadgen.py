"""A small HTTP/1.1 GET load generator on raw asyncio streams (loopback only).

It costs far less CPU per request than a full client library, so on a 2-core machine the
figures describe the server rather than the client. Each request has a timeout; a timed-out
or failed request counts as an error with latency = timeout.
"""

from __future__ import annotations

import asyncio
import socket
import time
from urllib.parse import urlsplit


class _Conn:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def ensure(self) -> None:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def _request(conn: _Conn, path: str, keep_alive: bool) -> int:
    await conn.ensure()
    assert conn.reader is not None and conn.writer is not None
    conn.writer.write(
        f"GET {path} HTTP/1.1\r\nHost: {conn.host}:{conn.port}\r\nAccept: */*\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n".encode()
    )
    await conn.writer.drain()
    head = await conn.reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)
    }
    if "content-length" in headers:
        await conn.reader.readexactly(int(headers["content-length"]))
        reusable = (
            keep_alive
            and headers.get("connection", "").lower() != "close"
            and lines[0].startswith("HTTP/1.1")
        )
    else:
        await conn.reader.read()  # body runs to EOF
        reusable = False
    if not reusable:
        conn.close()
    return status


async def _timed(conn: _Conn, path: str, keep_alive: bool, limit_s: float) -> tuple[float, bool]:
    t0 = time.perf_counter()
    try:
        status = await asyncio.wait_for(_request(conn, path, keep_alive), limit_s)
        ok = status == 200
    except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
        conn.close()
        ok = False
    dt = time.perf_counter() - t0
    return (dt if ok else max(dt, limit_s)), ok


async def run_load(url: str, n: int, concurrency: int, limit_s: float = 20.0) -> dict[str, float]:
    """``concurrency == 1``: n sequential requests over one keep-alive connection.
    Otherwise: n clients start at once, each on its own connection."""
    parts = urlsplit(url)
    host, port, path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path or "/"
    assert host in ("127.0.0.1", "localhost", "::1"), "load tests target loopback only"
    warm = _Conn(host, port)
    await _timed(warm, path, False, limit_s)
    t0 = time.perf_counter()
    if concurrency == 1:
        conn = _Conn(host, port)
        results = [await _timed(conn, path, True, limit_s) for _ in range(n)]
        conn.close()
    else:
        sem = asyncio.Semaphore(concurrency)

        async def one() -> tuple[float, bool]:
            async with sem:
                c = _Conn(host, port)
                try:
                    return await _timed(c, path, False, limit_s)
                finally:
                    c.close()

        results = await asyncio.gather(*[one() for _ in range(n)])
    wall = time.perf_counter() - t0
    lat = sorted(r[0] * 1000 for r in results)
    errors = sum(1 for r in results if not r[1])
    return {
        "req_s": (n - errors) / wall,
        "p50_ms": lat[len(lat) // 2],
        "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))],
        "errors": errors,
        "n": n,
    }


class KeepAliveClient:
    """One blocking keep-alive HTTP/1.1 connection for timing sequential GETs: the request's
    bytes out, the status line, headers and body in, with no more Python per request than
    that (a full client library adds ~0.2-0.4 ms per request, which a server-side figure of
    under a millisecond cannot absorb). Bodies are framed by Content-Length or chunked."""

    def __init__(self, url: str, limit_s: float = 60.0) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        assert self.host in ("127.0.0.1", "localhost", "::1"), "timing targets loopback only"
        self.limit_s = limit_s
        self._sock: socket.socket | None = None
        self._buf = b""

    def __enter__(self) -> KeepAliveClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock, self._buf = None, b""

    def get(self, target: str) -> tuple[int, dict[str, str], bytes]:
        """``target``: the path with its query string. Returns (status, headers, body)."""
        if self._sock is None:
            self._sock = socket.create_connection((self.host, self.port), self.limit_s)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Accept: */*\r\n\r\n".encode()
        )
        head = self._until(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 "):
            raise ValueError(f"not an HTTP/1.1 response: {lines[0]!r}")
        status = int(lines[0].split()[1])
        headers = {
            k.strip().lower(): v.strip()
            for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)
        }
        if "content-length" in headers:
            body = self._exactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._chunked()
        else:
            raise ValueError("a keep-alive response needs Content-Length or chunked framing")
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    def _fill(self) -> None:
        assert self._sock is not None
        data = self._sock.recv(1 << 20)
        if not data:
            self.close()
            raise ConnectionError("the server closed the connection mid-response")
        self._buf += data

    def _until(self, mark: bytes) -> bytes:
        while (i := self._buf.find(mark)) < 0:
            self._fill()
        out, self._buf = self._buf[:i], self._buf[i + len(mark) :]
        return out

    def _exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._fill()
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _chunked(self) -> bytes:
        parts = []
        while size := int(self._until(b"\r\n").split(b";")[0], 16):
            parts.append(self._exactly(size))
            self._until(b"\r\n")
        while self._until(b"\r\n"):  # trailers, up to the empty line
            pass
        return b"".join(parts)
