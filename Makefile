# Set-up on a fresh machine: `make demo` runs the demo, `make test` runs the tests.
# Both install what they need first. Python 3.11+ with pip is the only prerequisite.

PYTHON ?= python3
PIP := $(PYTHON) -m pip install --quiet --disable-pip-version-check

.PHONY: install demo test test-fast fast lint typecheck bench docs

install:
	$(PIP) -e '.[dev]'

demo: install
	$(PYTHON) -m crasp demo --out demo-output

test: install lint typecheck
	$(PYTHON) -m pytest -n 2 -q

# The linter (ruff, configured in pyproject.toml) on the packages and the tests.
lint: install
	$(PYTHON) -m ruff check crasp limit_transformer tasks validation tests conftest.py

# The type checker (mypy, configured in pyproject.toml) on the four packages.
typecheck: install
	$(PYTHON) -m mypy

# The edit loop: every package's quick tests and doctests, without the tests marked `slow`
# (tests/slow_tests.txt lists them; under a minute on 2 cores). `make test` still runs them all.
test-fast: install
	$(PYTHON) -m pytest -n 2 -q -m "not slow"

# The old name of test-fast.
fast: test-fast

bench: install
	$(PYTHON) benchmarks/interpreter.py

docs: install
	$(PIP) -e '.[docs]'
	$(PYTHON) -m mkdocs build --strict
