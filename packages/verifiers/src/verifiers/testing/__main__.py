"""``python -m verifiers.testing serve [--host H] [--port P] [--latency-ms MS] [--wrong-rate R]``.

Prints ``READY http://H:P/v1`` once listening and serves until SIGTERM/SIGINT. An address it
cannot listen on (a busy port, above all) is one line on stderr and exit status 1, so a script
waiting for READY can stop when the process is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import signal
import sys

from verifiers.errors import ConfigError
from verifiers.testing.responders import ArithmeticResponder
from verifiers.testing.server import ScriptedServer


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.ArgumentDefaultsHelpFormatter  # every option below says its default
    p = argparse.ArgumentParser(
        prog="python -m verifiers.testing",
        description="Test helpers of verifiers. `serve` runs the scripted model stand-in.",
        formatter_class=fmt,
    )
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    s = sub.add_parser(
        "serve",
        help="run the scripted OpenAI-compatible server",
        description="Serve /v1/chat/completions (and /v1/completions, /v1/models) with scripted "
        "replies: arithmetic questions get a \\boxed{} answer, tool calls are made when tools "
        "are offered. Prints 'READY <base URL>' once listening; stops on SIGTERM or Ctrl-C. "
        "A port already in use is an error (one line, exit status 1). "
        "It is a stand-in for tests and demos, not a model.",
        formatter_class=fmt,
    )
    s.add_argument("--host", default="127.0.0.1", help="address to listen on")
    s.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one")
    s.add_argument(
        "--latency-ms", type=float, default=0.0, help="milliseconds to wait before each reply"
    )
    s.add_argument(
        "--wrong-rate",
        type=float,
        default=0.0,
        help="share (0-1) of arithmetic questions answered off by one, chosen by a hash of "
        "the question (the same questions every run)",
    )
    s.add_argument(
        "--fail-rate",
        type=float,
        default=0.0,
        help="share (0-1) of requests answered with HTTP 500, drawn with --seed",
    )
    s.add_argument("--seed", type=int, default=0, help="seed of the --fail-rate draws")
    s.add_argument(
        "--model",
        default="mock-model",
        help="model id /v1/models lists, and replies report when a request names none",
    )
    s.add_argument(
        "--max-recorded",
        type=int,
        default=0,
        help="request bodies kept in memory for inspection (0: none)",
    )
    return p


async def _serve(args: argparse.Namespace) -> None:
    # every `serve` option but --wrong-rate (the responder's) is the server's keyword argument
    # of the same name, so a new option is one `add_argument` line
    options = {k: v for k, v in vars(args).items() if k not in ("cmd", "wrong_rate")}
    srv = ScriptedServer(ArithmeticResponder(wrong_rate=args.wrong_rate), **options)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    try:
        await srv.astart()
    except OSError as e:
        raise ConfigError(_listen_error(args.host, args.port, e)) from None
    print(f"READY {srv.base_url}", flush=True)
    try:
        await done.wait()
    finally:
        await srv.astop()


def _listen_error(host: str, port: int, e: OSError) -> str:
    if e.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is already in use (another stand-in still running?); "
            "choose another --port, or --port 0 for a free one"
        )
    return f"cannot listen on {host}:{port}: {e.strerror or e}"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import uvloop  # type: ignore[import-not-found]
    except ImportError:
        run = asyncio.run
    else:
        run = uvloop.run
    try:
        run(_serve(args))
    except ConfigError as e:
        print(f"python -m verifiers.testing serve: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
