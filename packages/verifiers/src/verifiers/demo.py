"""`make demo`: evaluate the bundled `arithmetic` environment end to end with `vf-eval`.

With OPENAI_BASE_URL (or OPENAI_API_KEY) set, a real model is evaluated; otherwise a scripted
stand-in server answers, and the demo says so.
"""

from __future__ import annotations

import os
import sys

from verifiers.cli.eval import main as vf_eval


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    base_url = os.environ.get("OPENAI_BASE_URL")
    if base_url or os.environ.get("OPENAI_API_KEY"):
        print(
            f"demo: evaluating {os.environ.get('VF_MODEL', 'gpt-4.1-mini')} at "
            f"{base_url or 'https://api.openai.com/v1'}",
            flush=True,
        )
        return vf_eval(["arithmetic", "-n", "20", "-r", "3", *argv])

    from verifiers.testing import ArithmeticResponder, ScriptedServer

    print(
        "demo: no endpoint configured (set OPENAI_BASE_URL / OPENAI_API_KEY to evaluate a real "
        "model).\ndemo: the replies below come from a SCRIPTED stand-in server, not a model: it "
        "answers arithmetic correctly about 75% of the time.",
        flush=True,
    )
    with ScriptedServer(ArithmeticResponder(wrong_rate=0.25), latency_ms=20) as server:
        return vf_eval(
            [
                "arithmetic",
                "-m",
                "scripted-model",
                "-b",
                server.base_url,
                "-n",
                "50",
                "-r",
                "4",
                "-c",
                "64",
                *argv,
            ]
        )


if __name__ == "__main__":
    raise SystemExit(main())
