"""Published prompts loaded at run time (`vf.load_published_prompt`, `vf.resolve_prompt`) and
the keyless judge rule (`vf.judge_endpoint`).

The files served here mimic the published layouts (a Python module with constants and a class,
a JSON file, a text file) with placeholder content written for these tests; the HTTP traffic
is real (a loopback server, fetched with httpx).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import verifiers as vf
from verifiers.utils.published_prompts import python_constant, rename_placeholders

MODULE = '''\
"""A stand-in for a published evaluation script."""
import json

GRADER = """Grade it.
Q: {question}
Gold: {gold_answer}
Candidate: {llm_response}
End with \\\\boxed{{A}} or \\\\boxed{{B}}."""

SHORT = "one " "two"
JOINED = f"no fields here" + " and more"
COMPUTED = GRADER.upper()


class Constants:
    SYSTEM = f"You write programs."
    FORMAT = "Read stdin."


def build(x):
    raise SystemExit("never executed")

raise SystemExit("the loader must not run this file")
'''


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def published(tmp_path, monkeypatch):
    """A loopback HTTP server over a folder in the published layout, and an empty cache."""
    root = tmp_path / "site"
    (root / "repo" / "src").mkdir(parents=True)
    (root / "repo" / "src" / "prompts.py").write_text(MODULE)
    (root / "repo" / "lib").mkdir()
    (root / "repo" / "lib" / "styles.json").write_text(
        json.dumps({"styles": [{"text": "first {subject}"}, {"text": "second"}], "n": 2})
    )
    (root / "repo" / "lib" / "intro.txt").write_text("You are an expert in {$}.\n")
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "cache"))
    handler = lambda *a, **k: _Quiet(*a, directory=str(root), **k)  # noqa: E731
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    hits: list[str] = []
    original = server.finish_request

    def counting(request, address):
        hits.append("GET")
        return original(request, address)

    server.finish_request = counting  # type: ignore[method-assign]
    # a short poll: shutdown() waits for the loop's next look, once per test
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/repo", root, hits
    finally:
        server.shutdown()
        server.server_close()


def test_python_constant_is_read_without_running_the_file(published):
    base, _, _ = published
    text = vf.load_published_prompt(
        {
            "url": f"{base}/src/prompts.py",
            "name": "GRADER",
            "placeholders": {"gold_answer": "answer", "llm_response": "response"},
        },
        required=["question", "answer", "response"],
    )
    assert text.startswith("Grade it.\nQ: {question}\nGold: {answer}\nCandidate: {response}")
    # escapes stay escapes: the judge's renderer turns {{A}} into {A}
    assert "\\boxed{{A}}" in text
    src = vf.PromptSource(url=f"{base}/src/prompts.py", name="Constants.SYSTEM")
    assert vf.load_published_prompt(src) == "You write programs."
    assert vf.load_published_prompt({"url": f"{base}/src/prompts.py", "name": "SHORT"}) == (
        "one two"
    )
    joined = vf.load_published_prompt({"url": f"{base}/src/prompts.py", "name": "JOINED"})
    assert joined == "no fields here and more"


def test_a_computed_or_missing_constant_is_an_error_not_a_fallback(published):
    base, _, _ = published
    with pytest.raises(vf.ConfigError, match="'COMPUTED' is not a constant string"):
        vf.load_published_prompt({"url": f"{base}/src/prompts.py", "name": "COMPUTED"})
    with pytest.raises(vf.ConfigError, match="defines no 'NOPE'"):
        vf.load_published_prompt({"url": f"{base}/src/prompts.py", "name": "NOPE"})
    with pytest.raises(vf.ConfigError, match="'build' is not a class"):
        vf.load_published_prompt({"url": f"{base}/src/prompts.py", "name": "build.x"})
    with pytest.raises(vf.ConfigError, match=r"lacks the placeholders \{answer\}"):
        vf.load_published_prompt(
            {"url": f"{base}/src/prompts.py", "name": "GRADER"}, required=["answer"]
        )


def test_json_key_and_whole_text(published):
    base, _, _ = published
    url = f"{base}/lib/styles.json"
    assert vf.load_published_prompt({"url": url, "key": "styles.0.text"}) == "first {subject}"
    assert vf.load_published_prompt({"url": url, "key": "styles.-1.text"}) == "second"
    with pytest.raises(vf.ConfigError, match="is a int, not text"):
        vf.load_published_prompt({"url": url, "key": "n"})
    with pytest.raises(vf.ConfigError, match="has no key 'styles.5.text'"):
        vf.load_published_prompt({"url": url, "key": "styles.5.text"})
    intro = vf.load_published_prompt({"url": f"{base}/lib/intro.txt"})
    assert intro == "You are an expert in {$}.\n"


def test_fetched_text_is_cached_for_offline_runs(published, tmp_path):
    base, root, hits = published
    spec = {"url": f"{base}/lib/intro.txt"}
    first = vf.load_published_prompt(spec)
    assert len(hits) == 1
    cached = list((tmp_path / "cache").glob("*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["text"] == first
    # the publication disappears (offline): the cache still answers, with no request
    (root / "repo" / "lib" / "intro.txt").unlink()
    assert vf.load_published_prompt(spec) == first
    assert len(hits) == 1
    # refresh goes to the network, which now says 404; no other source: a clear error
    with pytest.raises(vf.ConfigError, match=r"HTTP 404.*allow network access, or"):
        vf.load_published_prompt(spec, refresh=True)


def _cache_entry(tmp_path, spec) -> Path:
    return tmp_path / "cache" / f"{vf.PromptSource.from_spec(spec).cache_key()}.json"


def test_cache_writes_never_follow_a_link_planted_at_a_temporary_name(published, tmp_path):
    """Issue 26: the cache wrote its entry to `<entry>.<pid>.tmp` first, following a link
    planted at that predictable name. Temporary names are now unpredictable and created
    exclusively, so a planted link is never opened."""
    base, _, _ = published
    spec = {"url": f"{base}/lib/intro.txt"}
    entry = _cache_entry(tmp_path, spec)
    entry.parent.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    planted = entry.with_suffix(f".{os.getpid()}.tmp")
    planted.symlink_to(victim)
    assert vf.load_published_prompt(spec) == "You are an expert in {$}.\n"
    assert victim.read_text() == "precious"
    assert not entry.is_symlink()
    assert json.loads(entry.read_text())["text"] == "You are an expert in {$}.\n"
    # nothing else was left in the cache folder (no temporary file)
    assert sorted(entry.parent.iterdir()) == sorted([entry, planted])


def test_a_linked_cache_entry_is_neither_read_nor_written_through(published, tmp_path):
    """Issue 26: a link at a cache entry's name was read through, so whoever could plant it
    chose the prompt. It is fetched again, and the rewrite replaces the link, not its target."""
    base, _, hits = published
    spec = {"url": f"{base}/lib/intro.txt"}
    entry = _cache_entry(tmp_path, spec)
    entry.parent.mkdir()
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({"source": "x", "text": "forged"}))
    entry.symlink_to(forged)
    assert vf.load_published_prompt(spec) == "You are an expert in {$}.\n"
    assert len(hits) == 1
    assert json.loads(forged.read_text())["text"] == "forged"
    assert not entry.is_symlink()
    assert vf.load_published_prompt(spec) == "You are an expert in {$}.\n"
    assert len(hits) == 1  # the rewritten entry answers now


DAMAGED_ENTRIES = {
    "not JSON": b"{",
    "not UTF-8": b"\xff\xfe{}",
    "empty": b"",
    "a list": b"[]",
    "a string": b'"text"',
    "null": b"null",
    "no text": b'{"source": "x"}',
    "text a number": b'{"text": 5}',
    "nested too deeply": b"[" * 100_000,
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_ENTRIES))
def test_a_damaged_cache_entry_is_fetched_again(published, tmp_path, damage):
    """Issue 26: a damaged entry of another shape than a JSON object raised on every call
    (AttributeError, UnicodeDecodeError, RecursionError). Any damage now means a fetch, and
    the entry is rewritten."""
    base, _, hits = published
    spec = {"url": f"{base}/lib/intro.txt"}
    entry = _cache_entry(tmp_path, spec)
    entry.parent.mkdir()
    entry.write_bytes(DAMAGED_ENTRIES[damage])
    assert vf.load_published_prompt(spec) == "You are an expert in {$}.\n"
    assert len(hits) == 1
    assert json.loads(entry.read_text())["text"] == "You are an expert in {$}.\n"
    assert vf.load_published_prompt(spec) == "You are an expert in {$}.\n"
    assert len(hits) == 1


def test_a_deep_constant_expression_is_read_or_refused_never_a_crash(published):
    """Issue 26: a `.py` constant written as a 60,000-term `"a" + "a" + ...` raised
    RecursionError (from 1,000 terms on, in the reader; from about 3,000, in Python's parser).
    What the parser takes is now read in full; what it refuses is a ConfigError. A file with
    a NUL byte (Python 3.11's parser raises ValueError) is a ConfigError too."""
    base, root, _ = published
    folder = root / "repo" / "src"
    terms = [f'"{i},"' for i in range(1500)]
    (folder / "long.py").write_text(
        "LONG = " + " + ".join(terms) + "\nraise SystemExit('never run')\n"
    )
    (folder / "deep.py").write_text("DEEP = " + " + ".join(['"a"'] * 60_000) + "\n")
    (folder / "nul.py").write_text('X = "a"\0\n')
    long = vf.load_published_prompt({"url": f"{base}/src/long.py", "name": "LONG"})
    assert long == "".join(f"{i}," for i in range(1500))
    with pytest.raises(vf.ConfigError, match="deep.py is nested too deeply"):
        vf.load_published_prompt({"url": f"{base}/src/deep.py", "name": "DEEP"})
    with pytest.raises(vf.ConfigError, match="nul.py is not valid Python"):
        vf.load_published_prompt({"url": f"{base}/src/nul.py", "name": "X"})


def test_a_published_file_that_is_not_readable_text_is_a_config_error(published, tmp_path):
    """Issue 26, same class: JSON nested 100,000 deep raised RecursionError, and a `file://`
    source that is not UTF-8 raised UnicodeDecodeError."""
    base, root, _ = published
    (root / "repo" / "lib" / "deep.json").write_text("[" * 100_000)
    with pytest.raises(vf.ConfigError, match="deep.json is nested too deeply"):
        vf.load_published_prompt({"url": f"{base}/lib/deep.json", "key": "0"})
    binary = tmp_path / "prompt.txt"
    binary.write_bytes(b"\xff\xfe\x00 not text")
    with pytest.raises(vf.ConfigError, match="prompt.txt' is not UTF-8 text"):
        vf.load_published_prompt({"url": binary.as_uri()})


def test_unreachable_sources_fall_through_then_fail_with_what_to_do(published):
    base, _, _ = published
    dead = "http://127.0.0.1:9/nothing/prompts.py"  # the discard port: connection refused
    text = vf.load_published_prompt(
        [
            {"package": "surely_not_installed_pkg", "name": "X", "install": "pip install nope"},
            {"url": dead, "name": "GRADER"},
            {"url": f"{base}/src/prompts.py", "name": "Constants.FORMAT"},
        ]
    )
    assert text == "Read stdin."
    with pytest.raises(vf.ConfigError) as info:
        vf.load_published_prompt(
            [
                {"package": "surely_not_installed_pkg", "name": "X", "install": "pip install nope"},
                {"url": dead, "name": "GRADER"},
            ],
            what="grader prompt",
            instead="pass judge_prompt",
        )
    message = str(info.value)
    assert "cannot load the official grader prompt" in message
    assert "surely_not_installed_pkg" in message and "unreachable" in message
    assert message.endswith("pip install nope or allow network access, or pass judge_prompt")


def test_installed_package_attribute(tmp_path, monkeypatch):
    pkg = tmp_path / "pkgs" / "fake_bench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "prompts.py").write_text(
        'JUDGE = "Compare {response} with {correct_answer}."\n'
        "class Styles:\n    SYS = 'Be brief.'\nNUMBER = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    spec = {
        "package": "fake_bench.prompts",
        "name": "JUDGE",
        "placeholders": {"correct_answer": "answer"},
    }
    assert vf.load_published_prompt(spec) == "Compare {response} with {answer}."
    sys.modules.pop("fake_bench.prompts", None)
    assert (
        vf.load_published_prompt({"package": "fake_bench.prompts", "name": "Styles.SYS"})
        == "Be brief."
    )
    with pytest.raises(vf.ConfigError, match="is a int, not text"):
        vf.load_published_prompt({"package": "fake_bench.prompts", "name": "NUMBER"})
    with pytest.raises(vf.ConfigError, match="has no attribute 'MISSING'"):
        vf.load_published_prompt({"package": "fake_bench.prompts", "name": "MISSING"})
    # installed but failing at import (it reads a file relative to the working directory)
    (pkg / "broken.py").write_text("open('relative/data.json')\nX = 'never'\n")
    with pytest.raises(vf.ConfigError, match=r"cannot be imported \(FileNotFoundError"):
        vf.load_published_prompt({"package": "fake_bench.broken", "name": "X"})


def test_file_url_is_read_fresh_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "cache"))
    local = tmp_path / "prompts.py"
    local.write_text('P = "one"\n')
    spec = {"url": local.as_uri(), "name": "P"}
    assert vf.load_published_prompt(spec) == "one"
    local.write_text('P = "two"\n')
    assert vf.load_published_prompt(spec) == "two"
    assert not (tmp_path / "cache").exists()
    local.unlink()
    with pytest.raises(vf.ConfigError, match="cannot read it"):
        vf.load_published_prompt(spec)


def test_dataset_field(tmp_path, monkeypatch):
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "cache"))
    rows = tmp_path / "fewshot.jsonl"
    rows.write_text(
        "\n".join(json.dumps({"q": f"q{i}", "cot": f"Reason {i}."}) for i in range(3)) + "\n"
    )
    src = {"dataset": str(rows), "field": "cot", "row": 2}
    assert vf.load_published_prompt(src) == "Reason 2."
    with pytest.raises(vf.ConfigError, match="only 3 rows"):
        vf.load_published_prompt({"dataset": str(rows), "field": "cot", "row": 7})


def test_source_specs_are_checked():
    with pytest.raises(vf.ConfigError, match="exactly one of package, url or dataset"):
        vf.PromptSource(url="http://x/a.py", package="a", name="B")
    with pytest.raises(vf.ConfigError, match="needs the attribute name"):
        vf.PromptSource(package="a")
    with pytest.raises(vf.ConfigError, match="unknown prompt source keys"):
        vf.PromptSource.from_spec({"url": "http://x/a.py", "constant": "B"})
    with pytest.raises(vf.ConfigError, match="only http"):
        vf.load_published_prompt({"url": "ftp://x/a.txt"})


def test_resolve_prompt_argument(published):
    base, _, _ = published
    official = [{"url": f"{base}/lib/styles.json", "key": "styles.0.text"}]
    assert vf.resolve_prompt(None, "ours {subject}", official, argument="p") == "ours {subject}"
    assert vf.resolve_prompt("official", "ours", official, argument="p") == "first {subject}"
    own = vf.resolve_prompt("mine {subject}", "ours", official, argument="p", required=["subject"])
    assert own == "mine {subject}"
    spec = {"url": f"{base}/lib/styles.json", "key": "styles.1.text"}
    assert vf.resolve_prompt(spec, "ours", official, argument="p") == "second"
    with pytest.raises(vf.ConfigError, match=r"p lacks the placeholders \{subject\}"):
        vf.resolve_prompt("no fields", "ours", official, argument="p", required=["subject"])
    with pytest.raises(vf.ConfigError, match="p must be text"):
        vf.resolve_prompt(3, "ours", official, argument="p")


def test_helpers():
    src = 'class A:\n    B = "x" \'y\'\nC: str = "z"\n'
    assert python_constant(src, "A.B") == "xy" and python_constant(src, "C") == "z"
    assert rename_placeholders("{{a}} {a} {b}", {"a": "q"}) == "{{a}} {q} {b}"


# -- the keyless judge rule ------------------------------------------------------------------
def test_judge_endpoint_without_key_variable_sends_empty(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    parts = vf.judge_endpoint("http://127.0.0.1:1/v1", None)
    client = parts["judge_client"]
    assert client.api_key == "EMPTY" and str(client.base_url).startswith("http://127.0.0.1:1/v1")
    assert str(vf.judge_endpoint(None, None)["judge_client"].base_url).startswith(
        "https://api.openai.com/v1"
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    assert str(vf.judge_endpoint(None, None)["judge_client"].base_url).startswith(
        "http://127.0.0.1:2/v1"
    )
    assert vf.judge_endpoint("http://h/v1", "MY_KEY") == {
        "judge_base_url": "http://h/v1",
        "judge_api_key_var": "MY_KEY",
    }


async def test_keyless_judge_request_reaches_the_server_with_key_empty(monkeypatch):
    from aiohttp import web

    seen: list[str | None] = []

    async def completions(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        message = {"role": "assistant", "content": "yes"}
        return web.json_response(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "j",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-judge")
    try:
        rubric = vf.JudgeRubric(
            judge_model="j", **vf.judge_endpoint(f"http://127.0.0.1:{port}/v1", None)
        )
        prompt = [{"role": "user", "content": "2+2?"}]
        completion = [{"role": "assistant", "content": "4"}]
        assert await rubric.judge(prompt, completion, "4", {}) == "yes"
        await rubric.teardown()
    finally:
        await runner.cleanup()
    assert seen == ["Bearer EMPTY"]
