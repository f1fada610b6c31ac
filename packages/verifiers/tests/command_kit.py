"""The SDK's commands run as users run them, in a real subprocess with this interpreter: the
vf-eval tests (test_vf_eval*.py), the demo and the scripted server's command line.
Importable by name because conftest.py puts this folder on sys.path."""

import subprocess
import sys
import textwrap


def command(module: str, *args) -> list[str]:
    """``python -m module args...`` with this interpreter, every argument as a string."""
    return [sys.executable, "-m", module, *map(str, args)]


def run(argv: list[str], *, cwd=None, env=None, timeout: float = 120):
    """Run `argv` to its end, stdout and stderr captured as text."""
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def run_command(module: str, *args, **options) -> subprocess.CompletedProcess[str]:
    """`run` the command ``python -m module args...`` (options: cwd, env, timeout)."""
    return run(command(module, *args), **options)


def python(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`run` `code` in a fresh interpreter: none of this process's imports or state."""
    return run([sys.executable, "-c", code], timeout=timeout)


def error_in_fresh_interpreter(statements: str, error: str, timeout: float = 120) -> str:
    """The message of `error` (a class of ``vf``) that `statements` raise in a fresh
    interpreter with ``verifiers`` imported as ``vf``; fails when they raise nothing or
    something else (its traceback in the assertion)."""
    body = textwrap.indent(statements, "    ")
    code = (
        f"import verifiers as vf\ntry:\n{body}\nexcept vf.{error} as e:\n    print('RAISED', e)\n"
    )
    out = python(code, timeout)
    assert out.stdout.startswith("RAISED "), out.stdout + out.stderr
    return out.stdout.removeprefix("RAISED ").strip()


def vf_eval_cmd(*args) -> list[str]:
    """vf-eval with `args` and ``--no-progress`` (a progress bar only redraws into a pipe)."""
    return command("verifiers.cli.eval", *args, "--no-progress")


def vf_eval(*args, **options) -> subprocess.CompletedProcess[str]:
    """`run` `vf_eval_cmd(*args)` (options: cwd, env, timeout)."""
    return run(vf_eval_cmd(*args), **options)
