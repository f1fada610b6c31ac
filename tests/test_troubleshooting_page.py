"""docs/troubleshooting.md names every error a model endpoint can raise (issue 27: `ModelError`,
the one `vf-eval` reports for a 4xx answer, was missing from the page)."""

from __future__ import annotations

import inspect
from pathlib import Path

import verifiers as vf

PAGE = Path(__file__).resolve().parents[1] / "docs" / "troubleshooting.md"


def test_every_model_error_has_a_row():
    rows = [x for x in PAGE.read_text().splitlines() if x.startswith("| `")]
    model_errors = sorted(
        name
        for name in vf.__all__
        if inspect.isclass(obj := getattr(vf, name)) and issubclass(obj, vf.ModelError)
    )
    assert "ModelError" in model_errors and len(model_errors) >= 5
    missing = [n for n in model_errors if not any(f"`{n}" in row for row in rows)]
    assert not missing, f"no row on {PAGE.name} for {missing}"
    # the plain ModelError row says what to do about the statuses it carries
    (row,) = [r for r in rows if r.startswith("| `ModelError` (")]
    assert "404" in row and "401" in row and "-m" in row and "-b" in row
