"""A real headless browser for tests of web pages: Debian's Chromium driven through its
chromedriver by selenium (a development dependency, imported only when a browser starts)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selenium.webdriver import Chrome

__all__ = ["chromium"]

# headless, runnable as root and in small containers (no sandbox, no /dev/shm), one window size
# so screenshots and layouts compare across runs
_HEADLESS_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--window-size=1280,1000",
)


@contextmanager
def chromium(*arguments: str, capabilities: Mapping[str, Any] | None = None) -> Iterator[Chrome]:
    """A headless Chromium for the block, quit on exit.

    It runs headless, without Chromium's sandbox and /dev/shm (as root, in small containers),
    in a 1280x1000 window. `arguments` are further Chromium switches (e.g.
    ``--host-resolver-rules=...`` to cut a page off from the network); `capabilities` are
    WebDriver capabilities (e.g. ``{"goog:loggingPrefs": {"browser": "ALL"}}`` to read the
    console). Pages get 30 s to load. Raises `RuntimeError` naming `make system-deps` when
    chromium or chromedriver is not on PATH."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (binary and driver):  # make test installs both (scripts/system-deps.sh)
        raise RuntimeError("chromium and chromedriver are required: run `make system-deps`")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (*_HEADLESS_ARGUMENTS, *arguments):
        options.add_argument(argument)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    browser = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        browser.set_page_load_timeout(30)
        yield browser
    finally:
        browser.quit()
