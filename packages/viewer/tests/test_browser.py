"""The viewer in a real headless browser (Debian's chromium through chromedriver) over real
vf-eval runs of an EnvGroup with a tool environment, against a scripted model server: filter to
the failing rollouts and open one (its tool call, parsed answer and reward), compare two runs,
a rollout holding ``<script>`` runs nothing, a run being written shows new rollouts
(``vf-eval --view``), and the static export opens from file:// (issue 28 items 2-5).

Screenshots of the main views go to ``test-artifacts/viewer/`` at the repository root.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from verifiers_viewer.export import export
from verifiers_viewer.local import LocalRuns
from verifiers_viewer.server import ViewerServer

from verifiers.testing import ArithmeticResponder, Reply, ScriptedServer, chromium
from verifiers.testing.responders import last_text

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
SHOTS = ROOT / "test-artifacts" / "viewer"
ENVS = ROOT / "packages" / "verifiers" / "tests" / "envs"
HOSTILE = "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>"


def question(body: dict) -> tuple[int, int]:
    for m in body.get("messages") or []:
        found = re.search(r"What is (\d+) \+ (\d+)\?", str(m.get("content")))
        if m.get("role") == "user" and found:
            return int(found[1]), int(found[2])
    raise AssertionError(f"no question in {body.get('messages')}")


class Model:
    """Model "good" answers right; "bad" gets 7 + 8 (a tool task) and 2 + 2 wrong and answers
    1 + 1 with a body that is not JSON. "live" holds its answers after the first two until
    `gate` opens. Tool tasks call ``add`` first, with some reasoning."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.live_answered = 0
        self.arithmetic = ArithmeticResponder()

    async def __call__(self, body: dict) -> Reply | str:
        model = body.get("model")
        if model == "live":
            self.live_answered += 1
            if self.live_answered > 2:
                await asyncio.to_thread(self.gate.wait, 60)
            return self.arithmetic(body)
        a, b = question(body)
        if body.get("tools"):
            if not any(m.get("role") == "tool" for m in body["messages"]):
                return Reply(
                    reasoning_content=f"I should add {a} and {b} with the tool.",
                    tool_calls=[{"name": "add", "arguments": {"a": a, "b": b}}],
                )
            total = int(last_text(body, ("tool",)))
            total += 1 if model == "bad" and a == 7 else 0
            return Reply(content=f"The tool says **{total}**. \\boxed{{{total}}}")
        if model == "bad" and a == 1:
            return Reply(raw=b"this is not JSON")
        total = a + b + (1 if model == "bad" and a == 2 else 0)
        return f"So \\boxed{{{total}}}" + (f" {HOSTILE}" if a == 3 else "")


def vf_eval(cwd: Path, base_url: str, env_id: str, model: str, *args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ENVS), os.environ.get("PYTHONPATH")])),
    }
    cmd = [sys.executable, "-m", "verifiers.cli.eval", env_id, "-m", model, "-b", base_url]
    return subprocess.Popen(
        [*cmd, "--no-progress", "-A", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal sends it, also where the suite runs as a background job (whose
        # children start with SIGINT ignored, and the live-run test stops vf-eval with it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[Model, ScriptedServer]]:
    responder = Model()
    with ScriptedServer(responder) as server:
        yield responder, server
    responder.gate.set()


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, model) -> Path:
    """Two finished runs of classic_env_group (models "good" and "bad"), made by vf-eval."""
    cwd = tmp_path_factory.mktemp("runs")
    procs = [
        vf_eval(cwd, model[1].base_url, "classic_env_group", m, "-n", "6", "-r", "2")
        for m in ("good", "bad")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode in (0, 1), err  # "bad" has failed rollouts
    return cwd / "outputs" / "evals"


@pytest.fixture(scope="module")
def viewer(outputs) -> Iterator[ViewerServer]:
    server = ViewerServer(outputs, port=0).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium("--allow-file-access-from-files") as drv:
        yield drv


def key_of(outputs: Path, model: str) -> str:
    (run,) = (outputs / f"classic_env_group--{model}").iterdir()
    return LocalRuns(outputs).key_of(run)


def follow(browser, element) -> None:
    """Click a link or submit button and wait until the next page has replaced this one and
    loaded. The old page is recognised by a mark on its window (an old element's staleness
    raced: mid-navigation Chrome can answer "Node ... does not belong to the document")."""
    browser.execute_script("window.__leaving = true")
    element.click()
    WebDriverWait(browser, 15, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__leaving === undefined && document.readyState === 'complete'"
        )
    )


def shown_lines(browser) -> list[int]:
    return [
        int(tr.get_attribute("data-line"))
        for tr in browser.find_elements(By.CSS_SELECTOR, "#rollouts tbody tr")
    ]


def test_filter_to_failing_rollouts_and_open_one(browser, viewer, outputs) -> None:
    browser.get(viewer.base_url + "/")
    follow(browser, browser.find_element(By.PARTIAL_LINK_TEXT, "classic_env_group · bad"))
    assert len(shown_lines(browser)) == 12
    assert browser.find_element(By.ID, "members").text.count("calculator") == 1
    browser.save_screenshot(str(SHOTS / "run.png"))
    form = browser.find_element(By.ID, "filters")
    form.find_element(By.NAME, "reward_max").send_keys("0")
    Select(form.find_element(By.NAME, "member")).select_by_visible_text("calculator")
    follow(browser, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#rollouts tbody tr")
    assert len(rows) == 2  # 7 + 8 answered 16, twice
    assert all(r.find_element(By.CSS_SELECTOR, "td.reward").text == "0" for r in rows)
    browser.save_screenshot(str(SHOTS / "run-failing.png"))
    follow(browser, rows[0].find_element(By.CSS_SELECTOR, "a.open"))
    assert browser.find_element(By.CSS_SELECTOR, ".tool-call .tool-name").text == "add"
    assert '"a": 7' in browser.find_element(By.CSS_SELECTOR, ".tool-call .arguments").text
    assert browser.find_element(By.CSS_SELECTOR, ".tool-result pre").text == "15"
    assert browser.find_element(By.ID, "parsed-answer").text == "16"
    assert browser.find_element(By.ID, "target-answer").text == "15"
    assert browser.find_element(By.ID, "reward").text == "0"
    reasoning = browser.find_element(By.CSS_SELECTOR, "details.reasoning")
    assert reasoning.get_attribute("open") is None  # folded
    browser.save_screenshot(str(SHOTS / "rollout.png"))

    # The errored rollouts: their type, message and chain.
    browser.get(viewer.base_url + f"/runs/{key_of(outputs, 'bad')}?error=any")
    errored = shown_lines(browser)
    assert len(errored) == 2
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#rollouts a.open"))
    assert browser.find_element(By.CSS_SELECTOR, ".error-type").text.endswith("Error")
    browser.save_screenshot(str(SHOTS / "rollout-error.png"))


def test_compare_two_runs_disagreements_first(browser, viewer, outputs) -> None:
    browser.get(viewer.base_url + "/compare")
    Select(browser.find_element(By.NAME, "a")).select_by_value(key_of(outputs, "good"))
    Select(browser.find_element(By.NAME, "b")).select_by_value(key_of(outputs, "bad"))
    follow(browser, browser.find_element(By.CSS_SELECTOR, ".compare-form button"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#comparison tbody tr")
    kinds = [r.get_attribute("class") for r in rows]
    assert kinds == ["disagree"] * 3 + ["agree"] * 3
    assert "3 disagree" in browser.find_element(By.ID, "compare-summary").text
    browser.save_screenshot(str(SHOTS / "compare.png"))
    follow(browser, rows[0].find_element(By.CSS_SELECTOR, "a.both"))  # A above B
    assert len(browser.find_elements(By.CSS_SELECTOR, "#side-a .column")) == 2
    assert len(browser.find_elements(By.CSS_SELECTOR, "#side-b .column")) == 2
    browser.save_screenshot(str(SHOTS / "example.png"))


def test_a_script_in_a_completion_does_not_run(browser, viewer, outputs) -> None:
    browser.get(viewer.base_url + f"/runs/{key_of(outputs, 'good')}?example=2&member=math")
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#rollouts a.open"))
    completion = browser.find_element(By.CSS_SELECTOR, ".conversation").text
    assert "<script>window.__pwned=1</script>" in completion  # shown as text
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert not browser.find_elements(By.CSS_SELECTOR, ".conversation script, .conversation img")
    browser.save_screenshot(str(SHOTS / "rollout-script.png"))


def test_a_live_run_shows_new_rollouts(browser, model, tmp_path) -> None:
    responder, server = model
    proc = vf_eval(
        tmp_path,
        server.base_url,
        "arithmetic",
        "live",
        "-n",
        "3",
        "-r",
        "2",
        "-c",
        "1",
        "--view",
        "0",
    )
    try:
        url = None
        for line in proc.stderr:
            found = re.search(r"viewing at (http://127\.0\.0\.1:\d+/runs/\S+)", line)
            if found:
                url = found[1]
                break
        assert url, "vf-eval --view printed no URL"
        browser.get(url)
        total = lambda d: d.find_element(By.ID, "total").text  # noqa: E731
        # the live page redraws its summary as rollouts arrive: an element read while it is
        # replaced is read again at the next poll
        stale = (StaleElementReferenceException,)
        WebDriverWait(browser, 30, 0.2, ignored_exceptions=stale).until(lambda d: total(d) == "2")
        assert "live" in browser.find_element(By.ID, "summary").text
        browser.save_screenshot(str(SHOTS / "live-before.png"))
        responder.gate.set()
        WebDriverWait(browser, 60, 0.5, ignored_exceptions=stale).until(lambda d: total(d) == "6")
        browser.save_screenshot(str(SHOTS / "live-after.png"))
        # The page shows a rollout once it is written, a moment before the run ends: a
        # Ctrl-C then would interrupt the run (and the viewer would keep serving for a second
        # one). Stop it once vf-eval says the run is over.
        assert any("the viewer keeps serving" in line for line in proc.stderr)
    finally:
        responder.gate.set()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_the_static_export_opens_from_file(browser, outputs, tmp_path) -> None:
    out = tmp_path / "shared"
    export(LocalRuns(outputs).list(), out)
    browser.get((out / "index.html").as_uri())
    follow(browser, browser.find_element(By.PARTIAL_LINK_TEXT, "classic_env_group · good"))
    assert len(shown_lines(browser)) == 12
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#rollouts a.open"))
    assert browser.find_element(By.ID, "reward").text in ("0", "1")
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    browser.save_screenshot(str(SHOTS / "export-rollout.png"))
