import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verifiers.testing import chromium

sys.path.insert(0, str(Path(__file__).parent))

from e2e_kit import (  # noqa: F401 - fixtures
    bytecode_cache,
    hub,
    hub_client,
    make_venv,
    other_index,
    prime_as,
    prime_cli_wheel,
    published,
    scripted_model,
    shared_venv,
    verifiers_wheel,
)


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Chromium per test (the end-to-end pages tests: pushed results, the rollout
    viewer on the hub)."""
    with chromium() as drv:
        yield drv
