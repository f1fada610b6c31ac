"""No tracked file cites a source outside the repository (issue 27, item 5).

A reader of a fresh clone has only the repository: a comment that sends them to research notes
on the machine the code was written on (the team's shared notes folder, by a relative or an
absolute path, a section of such a note, someone's home folder) points nowhere. Each such
citation names its public source instead (a paper, a file of a public repository at a commit)
or a measurement in this repository (a bench/ README). This test reads every tracked text file
(`git ls-files`) and fails on the patterns those citations took.

Paths a program records as data (a benchmark's output path, a profiler's file names) are not
citations and are not matched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

# The notes' file names, as they were cited ("sandbox.md", "reference/peers.md").
NOTES = r"(?:verifiers|sandbox|peers|baseline|environments|prime-cli-hub)"

# Each pattern is a way a citation of something outside the checkout was written.
OUTSIDE = {
    "the shared reference folder": re.compile(r"shared/reference\b"),
    "a path above the checkout": re.compile(r"(?:\.\./)+shared\b"),
    # the team's notes and mirrors, and absolute paths of a checkout (a program's output kept
    # as data records paths relative to the repository instead)
    "the team's working folders": re.compile(r"/work/[\w.+-]+/"),
    "a notes file by section": re.compile(rf"\b{NOTES}\.md\s*§"),
    "the notes by section": re.compile(r"\breference\s+§"),
    "research notes": re.compile(r"\bresearch notes?\b", re.IGNORECASE),
    "a home folder": re.compile(r"(?:/home/[a-z_][\w.-]*/|/Users/[\w.-]+/)"),
}
# `reference/<notes>.md` and DESIGN.md are citations only when no tracked file has that path
# (docs/reference/environments.md is a documentation page).
NOTES_PATH = re.compile(rf"(?<![\w.-])(?:[\w.-]+/)*reference/({NOTES})\.md\b")
DESIGN = re.compile(r"\bDESIGN\.md\b")


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout
    return [p for p in out.decode().split("\0") if p]


def outside_references(text: str, tracked: set[str]) -> list[tuple[int, str]]:
    """What in `text` cites a path outside the repository: (offset, finding) pairs."""
    found = [
        (m.start(), f"{what}: {m.group(0)!r}")
        for what, rx in OUTSIDE.items()
        for m in rx.finditer(text)
    ]
    for m in NOTES_PATH.finditer(text):
        if f"docs/reference/{m.group(1)}.md" not in tracked and m.group(0) not in tracked:
            found.append((m.start(), f"a notes file: {m.group(0)!r}"))
    if not any(p.endswith("DESIGN.md") for p in tracked):
        found += [(m.start(), f"the design notes: {m.group(0)!r}") for m in DESIGN.finditer(text)]
    return sorted(found)


def test_no_tracked_file_cites_a_path_outside_the_repository():
    files = tracked_files()
    tracked = set(files)
    problems = []
    for rel in files:
        if rel == THIS:
            continue
        path = ROOT / rel
        if not path.is_file():  # deleted in the working tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary
            continue
        text = data.decode("utf-8", errors="replace")
        for at, finding in outside_references(text, tracked):
            problems.append(f"{rel}:{text.count(chr(10), 0, at) + 1}: {finding}")
    assert problems == [], "cite the public source instead:\n" + "\n".join(problems)


def test_the_patterns_catch_the_citations_seen_and_spare_ordinary_paths():
    """The checker finds each form such citations took in this tree before they were replaced,
    and leaves the repository's own paths, docs links and program data alone."""
    tracked = {"docs/reference/environments.md", "docs/reference/api.md"}
    caught = [
        "# Sources (research notes, /work/shared/reference/environments.md):",
        "expensive than bwrap (shared/reference/sandbox.md): use it warm",
        "see ../shared/reference/peers.md",
        "# -- grading table (environments.md §4.3 and §14) --",
        '"""Steps 6-12 of `prime env push` (reference §2.4)."""',
        "    --envs-repo /work/.mirror/CodeAgentCN+prime-environments/repo \\",
        "notes in reference/baseline.md say so",
        "as measured in /home/alice/notes/bench.txt",
        "the architecture (DESIGN.md §3)",
        '    "verifiers_file": "/work/main/packages/verifiers/src/verifiers/__init__.py",',
        '    "out": "/work/hub-wt/bench/hub/results.json"',
    ]
    for line in caught:
        assert outside_references(line, tracked), line
    spared = [
        "- Reference environments: reference/environments.md",
        "option is in the [command-line reference](reference/cli.md#vf-eval).",
        "Start with the [concepts](concepts/environments.md)",
        'measured here: bench/sandbox/README.md, "Before the zygote"',
        "default `~/.cache/verifiers/published_prompts`",
        "python3 bench/compat/extract.py --out /tmp/corpus \\",
        "INTELLECT-3: Technical Report, arXiv:2512.16144, §3",
    ]
    for line in spared:
        assert outside_references(line, tracked) == [], line
