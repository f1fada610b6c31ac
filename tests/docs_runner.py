"""Runs the code blocks of a documentation page as a reader would: see tests/test_docs.py for
the conventions a page follows."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SNIPPET_BASES = (DOCS / "examples", ROOT)  # mkdocs.yml's pymdownx.snippets base_path

PYTHON = {"python", "py"}
SHELL = {"bash", "sh", "shell"}
# Languages that show something (output, a file, a diagram) and are never executed.
SHOWN = {"text", "toml", "json", "yaml", "ini", "console", "output", "diff", "jsonl", "mermaid"}

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
NO_RUN = re.compile(r"<!--\s*no-run:\s*(?P<reason>[^>]*?)\s*-->\s*\Z")
FILE_HEADER = re.compile(r"^(?:#|//)\s*(?P<name>[\w./-]+\.\w+)\s*$")
SNIPPET = re.compile(r"^[ \t]*--8<--[ \t]+\"(?P<path>[^\"]+)\"[ \t]*$", re.MULTILINE)


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    no_run: str | None  # the reason, when marked `<!-- no-run: reason -->`

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def kind(self) -> str:
        if self.lang in PYTHON:
            return "python"
        if self.lang in SHELL:
            return "shell"
        return "shown"

    @property
    def file_name(self) -> str | None:
        """`# evals.toml` as the first line of a shown block: the reader saves it as that file."""
        first = self.code.splitlines()[0] if self.code.strip() else ""
        m = FILE_HEADER.match(first)
        return m["name"] if m and self.kind == "shown" else None


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()]
        marker = NO_RUN.search(before.rstrip() + "\n" if before.strip() else "")
        lang = m["info"].strip().split(" ")[0].strip("{}.").lower()
        code = textwrap.dedent(_expand_snippets(m["body"]))
        line = before.count("\n") + 1
        out.append(Block(page, line, lang, code, marker["reason"] if marker else None))
    return out


def _expand_snippets(code: str) -> str:
    def include(m: re.Match[str]) -> str:
        for base in SNIPPET_BASES:
            if (base / m["path"]).is_file():
                return (base / m["path"]).read_text()
        raise FileNotFoundError(f"snippet {m['path']!r} is in none of {SNIPPET_BASES}")

    return SNIPPET.sub(include, code)


def substitute(code: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        code = code.replace(placeholder, value)
    return code


# ------------------------------------------------------------------ Python
class PythonRunner:
    """The page's Python blocks in order, in one namespace of a fresh interpreter of the
    reader's environment (a reader pastes them into one session). The interpreters are forks
    of one warm process (tests/docs_forkserver.py), so a page does not pay for importing the
    SDK again."""

    def __init__(self, python: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(python), str(Path(__file__).with_name("docs_forkserver.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)

    def run(
        self,
        page_blocks: list[Block],
        cwd: Path,
        env: dict[str, str],
        values: dict[str, str],
        timeout: float,
    ) -> subprocess.CompletedProcess[str]:
        folder = cwd / ".docs-blocks"
        folder.mkdir(exist_ok=True)
        files = []
        for i, b in enumerate(page_blocks):
            path = folder / f"{i}.py"
            path.write_text(substitute(b.code, values))
            files.append((b.where, str(path)))
        out, err = folder / "py-stdout", folder / "py-stderr"
        req = {"cwd": str(cwd), "env": env, "blocks": files, "stdout": str(out), "stderr": str(err)}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        pid = json.loads(self.proc.stdout.readline())["pid"]
        timed_out = not select.select([self.proc.stdout], [], [], timeout)[0]
        if timed_out:
            _kill_group(pid)
        rc = json.loads(self.proc.stdout.readline())["rc"]
        stderr = err.read_text()
        if timed_out:
            rc, stderr = 124, stderr + f"\ndocs: the page's Python blocks ran past {timeout}s"
        return subprocess.CompletedProcess(["python"], rc, out.read_text(), stderr)


# ------------------------------------------------------------------ shell
def run_shell(
    page_blocks: list[Block], cwd: Path, env: dict[str, str], values: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """The page's shell blocks in order in ONE bash (a reader's terminal: `cd` and `export`
    carry over), stopping at the first failing command. Background jobs are killed at the end."""
    script = cwd / ".docs-blocks"
    script.mkdir(exist_ok=True)
    lines = [
        "set -eo pipefail",
        "trap 'echo \"docs: block $DOCS_BLOCK failed: $BASH_COMMAND\" >&2' ERR",
    ]
    for i, b in enumerate(page_blocks):
        path = script / f"{i}.sh"
        path.write_text(substitute(b.code, values))
        lines += [f"DOCS_BLOCK={b.where}", f"echo '::: {b.where}' >&2", f"source {path}"]
    runner = script / "page.sh"
    runner.write_text("\n".join(lines) + "\n")
    return _run(["bash", "--noprofile", "--norc", str(runner)], cwd, env, timeout)


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    # Output goes to files, not pipes: a background job (`serve &`) keeps a pipe open after
    # the script ends, a file it can keep writing to does not hold anything up.
    log_out, log_err = cwd / ".docs-blocks" / "stdout", cwd / ".docs-blocks" / "stderr"
    with open(log_out, "w") as out, open(log_err, "w") as err:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True
        )  # its own process group: background jobs are killed with it below
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = 124
        finally:
            _kill_group(proc.pid)
            proc.wait()
    stderr = log_err.read_text()
    if rc == 124:
        stderr += f"\ndocs: the page's blocks ran past {timeout}s"
    return subprocess.CompletedProcess(argv, rc, log_out.read_text(), stderr)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def pages() -> Iterator[Path]:
    yield from sorted(p for p in DOCS.rglob("*.md"))
