"""`verifiers.testing.chromium`: the one headless browser the packages' page tests share (the
viewer's, the hub's web pages and API docs, the cross-package end-to-end pages; issue 29 item 5).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifiers.testing import chromium


def test_a_missing_browser_names_the_command_that_installs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither chromium nor chromedriver on it
    with pytest.raises(RuntimeError, match="make system-deps"), chromium():
        pass


@pytest.mark.e2e
def test_switches_and_capabilities_reach_the_browser_which_quits_after_the_block() -> None:
    with chromium(
        "--user-agent=verifiers-probe", capabilities={"goog:loggingPrefs": {"browser": "ALL"}}
    ) as browser:
        browser.get("data:text/html,<script>console.warn('probe-line')</script>")
        assert browser.execute_script("return navigator.userAgent") == "verifiers-probe"
        assert browser.get_window_size() == {"width": 1280, "height": 1000}
        assert any("probe-line" in entry["message"] for entry in browser.get_log("browser"))
        driver_process = browser.service.process
    assert driver_process.poll() is not None  # chromedriver (and its browser) gone
