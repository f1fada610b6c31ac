"""The web pages in a real headless browser (Debian's chromium through chromedriver).

Screenshots of the main pages are written to ``test-artifacts/web/`` at the repository root
(or ``$PRIME_HUB_SCREENSHOTS``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from prime_hub_testkit import HubServer, make_sdist, make_wheel, publish, start_hub
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from prime_hub.settings import Settings
from verifiers.testing import chromium

ROOT = Path(__file__).resolve().parents[3]
SHOTS = Path(os.environ.get("PRIME_HUB_SCREENSHOTS") or ROOT / "test-artifacts" / "web")

README = """# Arithmetic drills

Trains **exact arithmetic** with a boxed answer.

## Reward

| outcome | reward |
|---|---|
| correct | 1.0 |
| wrong | 0.0 |

<script>window.__pwned = "script";</script>
<img src="x" onerror="window.__pwned = 'img'">
[a link](javascript:window.__pwned='link')

```python
env = vf.load_environment("drills")
```
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as drv:
        yield drv


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, upstream_index) -> Iterator[HubServer]:
    data = tmp_path_factory.mktemp("hub-web")
    settings = Settings(data_dir=data, upstream_index_url=upstream_index.url)
    server = start_hub("sqlite", settings, {"PRIME_HUB_DATA_DIR": str(data)})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def site(hub: HubServer) -> dict[str, str]:
    """A public environment with two versions (one yanked), results and a hostile README,
    and a private environment of the same owner."""
    owner, token = hub.new_user("web")
    for v in ("1.0.0", "1.1.0"):
        files = [make_wheel("drills", v, deps=["numpy>=1.26"]), make_sdist("drills", v)]
        assert publish(hub, token, owner, "drills", files).status_code == 201
    secret = [make_wheel("secret-env", "0.1.0"), make_sdist("secret-env", "0.1.0")]
    assert publish(hub, token, owner, "secret-env", secret, visibility="private").status_code == 201
    with hub.client(token) as c:
        base = f"/api/v1/environments/{owner}/drills"
        r = c.patch(
            base,
            json={
                "readme": README,
                "tags": ["math", "arithmetic"],
                "description": "Exact arithmetic drills",
            },
        )
        assert r.status_code == 200, r.text
        r = c.post(f"{base}/versions/1.0.0/yank", json={"reason": "wrong answers in 3 rows"})
        assert r.status_code == 200
        for version, model, mean in (
            ("1.0.0", "model-a", 0.41),
            ("1.1.0", "model-a", 0.62),
            ("1.1.0", "model-b", 0.35),
        ):
            body = {
                "model": model,
                "num_examples": 20,
                "rollouts_per_example": 4,
                "num_rollouts": 80,
                "num_errors": 0,
                "reward_mean": mean,
                "reward_std": 0.1,
                "pass_at_k": {"1": mean, "4": 0.9},
                "metrics": {"correct": mean},
            }
            assert c.post(f"{base}/versions/{version}/evals", json=body).status_code == 201
    return {"owner": owner, "token": token, "url": hub.url}


def _shot(drv: webdriver.Chrome, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    drv.save_screenshot(str(SHOTS / f"{name}.png"))


def _navigate(drv: webdriver.Chrome, action) -> None:  # type: ignore[no-untyped-def]
    """Click or submit, then wait until the next page has replaced this one and finished
    loading: a click returns before the navigation it starts, and the next command must not race
    it. The old page is recognised by a mark on its window, which no new page has. (Waiting for
    the old element to go stale raced too: mid-navigation Chrome answers a question about it
    with "Node ... does not belong to the document", not a stale-element error.)"""
    drv.execute_script("window.__leaving = true")
    action()
    WebDriverWait(drv, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__leaving === undefined && document.readyState === 'complete'"
        )
    )


def _text(drv: webdriver.Chrome) -> str:
    return drv.find_element(By.TAG_NAME, "body").text


def test_search_finds_the_environment(browser, site):
    browser.get(site["url"] + "/")
    box = browser.find_element(By.CSS_SELECTOR, "input[type=search]")
    box.send_keys("drills")
    _navigate(browser, box.submit)
    link = browser.find_element(By.LINK_TEXT, f"{site['owner']}/drills")
    assert "Exact arithmetic drills" in _text(browser)
    _shot(browser, "home-search")
    _navigate(browser, browser.find_element(By.PARTIAL_LINK_TEXT, "arithmetic (").click)  # tags
    assert browser.find_elements(By.LINK_TEXT, f"{site['owner']}/drills")
    link = browser.find_element(By.LINK_TEXT, f"{site['owner']}/drills")
    _navigate(browser, link.click)
    assert browser.current_url.endswith(f"/{site['owner']}/drills")


def test_environment_page_shows_readme_versions_yank_and_results(browser, site):
    browser.get(f"{site['url']}/{site['owner']}/drills")
    readme = browser.find_element(By.CSS_SELECTOR, "section.readme")
    assert readme.find_element(By.TAG_NAME, "h1").text == "Arithmetic drills"
    assert readme.find_element(By.TAG_NAME, "table")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.version-row")
    assert [r.text.split()[0] for r in rows] == ["1.1.0", "1.0.0"]
    yanked = browser.find_element(By.CSS_SELECTOR, "tr.is-yanked .yanked")
    assert "wrong answers in 3 rows" in yanked.text
    assert "numpy>=1.26" in _text(browser)
    assert (
        f"prime env install {site['owner']}/drills" in browser.find_element(By.ID, "install").text
    )
    results = browser.find_elements(By.CSS_SELECTOR, "tr.eval-row")
    assert len(results) == 3
    assert any("0.620 ± 0.100" in r.text for r in results)
    assert browser.find_element(By.CSS_SELECTOR, "svg.chart").find_elements(By.TAG_NAME, "circle")
    _shot(browser, "environment")


def test_readme_script_does_not_execute(browser, site):
    browser.get(f"{site['url']}/{site['owner']}/drills")
    assert browser.execute_script("return window.__pwned === undefined")
    # the javascript: link is not made a link at all (nothing to click)
    assert browser.find_elements(By.LINK_TEXT, "a link") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert browser.execute_script("return window.__pwned === undefined")
    assert "<script>" in _text(browser)  # shown as text, not run


def test_source_browser_lists_and_shows_files(browser, site):
    browser.get(f"{site['url']}/{site['owner']}/drills")
    _navigate(browser, browser.find_elements(By.LINK_TEXT, "browse")[0].click)
    _navigate(browser, browser.find_element(By.LINK_TEXT, "drills/__init__.py").click)
    assert "X = 1" in browser.find_element(By.CSS_SELECTOR, "pre.file").text
    _shot(browser, "source")


def test_private_environment_needs_sign_in(browser, site):
    page = f"{site['url']}/{site['owner']}/secret-env"
    browser.delete_all_cookies()
    browser.get(page)
    assert "not found" in _text(browser).lower()
    browser.get(f"{site['url']}/{site['owner']}")
    assert "secret-env" not in _text(browser)

    browser.get(f"{site['url']}/login?next=/{site['owner']}/secret-env")
    browser.find_element(By.ID, "token").send_keys(site["token"])
    _navigate(browser, browser.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click)
    assert browser.current_url == page
    assert "private" in _text(browser) and "0.1.0" in _text(browser)
    browser.get(f"{site['url']}/{site['owner']}")
    assert "secret-env" in _text(browser)

    _navigate(browser, browser.find_element(By.XPATH, "//button[text()='Sign out']").click)
    browser.get(page)
    assert "not found" in _text(browser).lower()


def test_tokens_are_created_once_and_revoked(browser, site, hub):
    browser.get(f"{site['url']}/login?next=/settings/tokens")
    browser.find_element(By.ID, "token").send_keys(site["token"])
    _navigate(browser, browser.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click)
    assert browser.current_url.endswith("/settings/tokens")
    browser.find_element(By.NAME, "name").send_keys("ci-reader")
    browser.find_element(By.NAME, "environment").send_keys(f"{site['owner']}/secret-env")
    _navigate(browser, browser.find_element(By.XPATH, "//button[text()='Create token']").click)
    new_token = browser.find_element(By.ID, "new-token").text.strip()
    assert new_token.startswith("phub_")
    _shot(browser, "tokens")
    with hub.client(new_token) as c:  # the new token grants exactly that private environment
        assert c.get(f"/api/v1/environments/{site['owner']}/secret-env").status_code == 200
        assert c.get("/api/v1/whoami").json()["token"]["scope"] == "read"
    browser.get(f"{site['url']}/settings/tokens")
    assert "phub_" not in _text(browser)  # shown once only
    _navigate(
        browser,
        browser.find_element(By.CSS_SELECTOR, "button[aria-label='Revoke ci-reader']").click,
    )
    row = [
        r for r in browser.find_elements(By.CSS_SELECTOR, "tr.token-row") if "ci-reader" in r.text
    ]
    assert "revoked" in row[0].text
    with hub.client(new_token) as c:
        assert c.get(f"/api/v1/environments/{site['owner']}/secret-env").status_code == 401
    _navigate(browser, browser.find_element(By.XPATH, "//button[text()='Sign out']").click)


@pytest.mark.parametrize(
    ("minter", "scope", "environment"),
    [
        ({"scope": "read"}, "publish", ""),  # read-only session asks for publish
        ({"scope": "publish", "environment": "{owner}/drills"}, "read", ""),  # unscoped
    ],
    ids=["read-asks-publish", "bound-asks-unscoped"],
)
def test_token_form_cannot_widen_the_session_token(browser, site, hub, minter, scope, environment):
    """The escalation an attacker found: a narrow session minting a wide token in the form."""
    spec = {k: v.format(owner=site["owner"]) for k, v in minter.items()}
    _, session_token = hub.hub.accounts.create_token(site["owner"], **spec)
    before = len(hub.hub.accounts.list_tokens(site["owner"]))
    browser.delete_all_cookies()
    browser.get(f"{site['url']}/login?next=/settings/tokens")
    browser.find_element(By.ID, "token").send_keys(session_token)
    _navigate(browser, browser.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click)
    assert "at most the rights" in browser.find_element(By.ID, "mint-limits").text
    browser.find_element(By.NAME, "name").send_keys("escalate")
    box = browser.find_element(By.NAME, "environment")
    box.clear()
    box.send_keys(environment)
    browser.find_element(By.CSS_SELECTOR, f"select[name=scope] option[value={scope}]").click()
    _navigate(browser, browser.find_element(By.XPATH, "//button[text()='Create token']").click)
    assert browser.find_elements(By.ID, "new-token") == []
    assert "cannot create" in _text(browser) or "limited to" in _text(browser)
    assert len(hub.hub.accounts.list_tokens(site["owner"])) == before
    _navigate(browser, browser.find_element(By.XPATH, "//button[text()='Sign out']").click)
