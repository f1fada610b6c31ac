"""What the agent's two tools do with text: which programs a command runs, how command output
is shown, and the one-occurrence replacement of `edit_via_str_replace` (no sandbox here)."""

from __future__ import annotations

import posixpath
import re

_SEGMENT_SPLIT = re.compile(r"&&|\|\||[;|&\n()]|\$\(|`")


def first_words(command: str) -> list[str]:
    """The program name of every simple command in `command` (split on ;, &&, ||, |, &, $(...))."""
    words = []
    for segment in _SEGMENT_SPLIT.split(command):
        tokens = segment.strip().split()
        while tokens and ("=" in tokens[0] and not tokens[0].startswith("=")):
            tokens = tokens[1:]  # VAR=value prefixes
        while tokens and tokens[0] in ("sudo", "env", "exec", "time", "command", "nice"):
            tokens = tokens[1:]
        if tokens:
            words.append(posixpath.basename(tokens[0]))
    return words


def numbered(text: str, first: int, last: int) -> str:
    lines = text.split("\n")
    first, last = max(1, first), min(len(lines), last)
    return "\n".join(f"{i:6d}\t{lines[i - 1]}" for i in range(first, last + 1))


def observation(exit_code: int, output: str, max_chars: int, capped: bool = False) -> str:
    """A command's result as the model sees it; output past `max_chars` is shown as its first
    and last halves with a warning."""
    note = "\n[output stopped at the sandbox's output cap]" if capped else ""
    if len(output) <= max_chars:
        return f"<returncode>{exit_code}</returncode>\n<output>\n{output}{note}\n</output>"
    half = max_chars // 2
    elided = len(output) - 2 * half
    return (
        f"<returncode>{exit_code}</returncode>\n<warning>\nThe output of your last command "
        f"was too long ({len(output)} characters). Use a more selective command (grep, head, "
        "tail, sed -n) instead of one that prints this much.\n</warning>\n"
        f"<output_head>\n{output[:half]}\n</output_head>\n"
        f"<elided_chars>\n{elided} characters elided\n</elided_chars>\n"
        f"<output_tail>\n{output[-half:]}{note}\n</output_tail>"
    )


def sandbox_path(path: str, shown: str, rel: str) -> str:
    """`path` as the model wrote it (relative to, or under, the repository at `shown`) as the
    sandbox calls name it (the repository at `rel`)."""
    full = posixpath.normpath(posixpath.join(shown, path))
    if full == shown or full.startswith(shown + "/"):
        full = rel + full[len(shown) :]
    return full


def replace_once(text: str, old_str: str, new_str: str, path: str) -> tuple[str, str]:
    """``(new text, the reply to the model)`` for replacing the one occurrence of `old_str` in
    the file `path` holding `text`; ValueError (the model's mistake) when it is not exactly
    one."""
    count = text.count(old_str)
    if count == 0:
        raise ValueError(
            f"old_str was not found in {path}; check whitespace and indentation "
            "(view the file with `sed -n 'START,ENDp' FILE` or `cat -n FILE`)"
        )
    if count > 1:
        starts, i = [], text.find(old_str)
        while i != -1:
            starts.append(text.count("\n", 0, i) + 1)
            i = text.find(old_str, i + 1)
        raise ValueError(
            f"old_str occurs {count} times in {path} (starting at lines "
            f"{', '.join(map(str, starts))}); include more context to make it unique"
        )
    at = text.find(old_str)
    new_text = text[:at] + new_str + text[at + len(old_str) :]
    first = text.count("\n", 0, at) + 1
    last = first + new_str.count("\n")
    snippet = numbered(new_text, first - 3, last + 3)
    reply = (
        f"The file {path} has been edited. Lines {max(1, first - 3)} onwards now read:\n{snippet}"
    )
    return new_text, reply
