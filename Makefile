# The README's commands. Each target bootstraps what it needs on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV := $(PYTHON) -m uv
endif

.PHONY: bootstrap sync system-deps lint typecheck test demo bench docs

bootstrap:
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet uv

# --compile-bytecode compiles the dependencies; compileall does the same for the workspace's own
# sources (editable, so uv leaves them): every vf-eval, hub or env-server process the tests start
# would otherwise compile them again where PYTHONDONTWRITEBYTECODE is set (0.6 s of a 2.4 s run).
sync: bootstrap
	$(UV) sync --all-packages --locked --compile-bytecode
	$(UV) run --no-sync python -m compileall -q packages/*/src environments > /dev/null

# System packages some tests need (installed with apt-get when running as root).
system-deps:
	bash scripts/system-deps.sh

lint: sync
	$(UV) run --no-sync ruff check .
	$(UV) run --no-sync ruff format --check .

# mypy over what the root pyproject's [tool.mypy] names: every package and environment (the hub and
# the CLI strict; the SDK, viewer and environments without untyped definitions).
typecheck: sync
	$(UV) run --no-sync mypy

# The whole suite; it also builds the documentation strictly (tests/test_docs.py). Two workers,
# each taking whole files (the files that start Ray as one unit: the root conftest.py); plain
# `pytest` runs the same suite in one process.
test: sync system-deps lint typecheck
	$(UV) run --no-sync pytest -n 2 --dist loadfile

# The documentation site, into site/ (`mkdocs serve` to browse while editing).
docs: sync
	NO_MKDOCS_2_WARNING=1 $(UV) run --no-sync mkdocs build --strict

# Not `sync`: the demo syncs a virtualenv of its own (.venvs/demo), never the project's .venv.
demo: bootstrap
	$(PYTHON) scripts/demo.py

bench: sync
	$(UV) run --no-sync python bench/rollouts/run.py
