"""Rollouts go with an eval, and the hub shows them (issue 28 items 1 and 5): `prime eval push
DIR` uploads a run folder's summary and results.jsonl; in a real browser (Debian's headless
chromium, as tests/test_web_shows_pushed_results.py) the environment page links to the run,
the run filters to its failing rollouts, and one rollout shows its tool call, parsed answer
and reward."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from datasets import Dataset
from e2e_kit import ENV, REF
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import verifiers as vf
from verifiers.results import read_metadata, write_metadata
from verifiers.testing import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
SHOTS = Path(os.environ.get("PRIME_HUB_SCREENSHOTS") or ROOT / "test-artifacts" / "web")
MODEL = "viewer-check-model"


def add(a: int, b: int) -> int:
    """Add two integers (wrong when a is odd, so some rollouts fail)."""
    return a + b + (a % 2)


@pytest.fixture(scope="module")
def tool_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run folder: a ToolEnv evaluated against the scripted model (which calls `add`
    and boxes what it returns), scored by MathRubric, saved as vf-eval saves it."""
    run_dir = tmp_path_factory.mktemp("runs") / "outputs" / "evals" / "tool--m" / "run1"
    dataset = Dataset.from_list(
        [{"question": f"What is {i} + 10?", "answer": str(i + 10)} for i in range(4)]
    )
    env = vf.ToolEnv(tools=[add], dataset=dataset, rubric=vf.MathRubric(), max_turns=3)
    with ScriptedServer() as srv:
        client = vf.OpenAIClient(srv.base_url, api_key="x")
        env.evaluate_sync(client, MODEL, num_examples=4, save_results=True, results_path=run_dir)
    write_metadata(run_dir, {**read_metadata(run_dir), "status": "complete"})
    return run_dir


def _evals(hub_url: str) -> list[dict]:
    return httpx.get(f"{hub_url}/api/v1/environments/{REF}/evals").json()["evals"]


def test_prime_eval_push_dir_uploads_the_rollouts(prime_as, published, hub, tool_run, tmp_path):
    """`prime eval push DIR`: the summary and every record; a cut-off line (a killed and
    resumed run) is left out and said so; `--no-rollouts` pushes the summary alone."""
    run = tmp_path / "run"
    shutil.copytree(tool_run, run)
    with open(run / "results.jsonl", "ab") as f:
        f.write(b'{"example_id": 9, "prompt": [{"role": "us\n')  # what a kill leaves
    alice = prime_as("alice")
    pushed = alice("eval", "push", run, "--env", f"{ENV}@0.1.0").ok()
    assert f"for {REF} 0.1.0" in pushed.out and "rollouts: 4 records" in pushed.out
    assert "left out 1 line(s)" in pushed.err
    # this run's row: other files share the session's hub, and may push 0.1.0 evals first
    (row,) = [
        e
        for e in _evals(hub.url)
        if e["rollouts"] and e["version"] == "0.1.0" and e["model"] == MODEL
    ]
    assert row["rollouts"]["count"] == 4 and row["model"] == MODEL
    base = f"{hub.url}/api/v1/environments/{REF}/evals/{row['id']}/rollouts"
    failing = httpx.get(base, params={"reward_max": 0}).json()
    assert failing["total"] == 2  # examples 1 and 3: `add` was off by one
    assert {r["parsed_answer"] for r in failing["rollouts"]} == {"12", "14"}
    one = httpx.get(f"{base}/{failing['rollouts'][0]['line']}").json()
    assert one["record"]["completion"][0]["tool_calls"][0]["function"]["name"] == "add"

    summary_only = alice("eval", "push", run, "--env", f"{ENV}@0.1.0", "--no-rollouts").ok()
    assert "rollouts:" not in summary_only.out
    assert alice("eval", "push").rc != 0  # no folder: a usage error, nothing pushed


def _navigate(drv: webdriver.Chrome, action) -> None:  # type: ignore[no-untyped-def]
    """Click, then wait until the next page has replaced this one (recognised by a mark on the
    old window) and loaded: a click returns before its navigation, and the filtered list was
    read from the old page under load."""
    drv.execute_script("window.__leaving = true")
    action()
    WebDriverWait(drv, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__leaving === undefined && document.readyState === 'complete'"
        )
    )


def test_environment_page_opens_the_run_filters_failing_and_shows_a_rollout(
    prime_as, published, hub, tool_run, browser
):
    prime_as("alice")("eval", "push", tool_run, "--env", f"{ENV}@0.1.1").ok()
    SHOTS.mkdir(parents=True, exist_ok=True)

    browser.get(f"{hub.url}/{REF}")
    heading = browser.find_element(By.XPATH, f"//h3[text()='{MODEL}']")
    table = heading.find_element(By.XPATH, "following-sibling::table[1]")
    link = table.find_element(By.CSS_SELECTOR, "tr.eval-row a.rollouts-link")
    assert link.text == "view 4"
    browser.save_screenshot(str(SHOTS / "environment-with-rollouts-link.png"))
    _navigate(browser, link.click)

    assert browser.find_element(By.ID, "total").text == "4"
    browser.save_screenshot(str(SHOTS / "viewer-run-page.png"))
    form = browser.find_element(By.ID, "filters")
    form.find_element(By.NAME, "reward_max").send_keys("0")
    _navigate(browser, form.find_element(By.CSS_SELECTOR, "button[type=submit]").click)
    rows = browser.find_elements(By.CSS_SELECTOR, "#rollouts tbody tr")
    assert len(rows) == 2  # the two rollouts whose tool answered wrong
    assert [float(r.find_element(By.CSS_SELECTOR, "td.reward").text) for r in rows] == [0.0] * 2
    browser.save_screenshot(str(SHOTS / "viewer-run-failing-only.png"))
    _navigate(browser, rows[0].find_element(By.CSS_SELECTOR, "a.open").click)

    call = browser.find_element(By.CSS_SELECTOR, ".tool-call")
    assert call.find_element(By.CSS_SELECTOR, ".tool-name").text == "add"
    # examples 1 and 3 failed; the page lists them in the order the run wrote them
    target = browser.find_element(By.ID, "target-answer").text
    assert target in ("11", "13")
    a = int(target) - 10
    assert f'"a": {a}' in call.find_element(By.CSS_SELECTOR, ".arguments").text
    assert browser.find_element(By.ID, "parsed-answer").text == str(a + 11)  # a + 10, off by one
    assert float(browser.find_element(By.ID, "reward").text) == 0.0
    browser.save_screenshot(str(SHOTS / "viewer-failing-rollout.png"))
