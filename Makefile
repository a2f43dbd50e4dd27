# Set-up on a fresh machine: `make demo` runs the demo, `make test` runs the tests.
# Both install what they need first. Python 3.11+ with pip is the only prerequisite.

PYTHON ?= python3
PIP := $(PYTHON) -m pip install --quiet --disable-pip-version-check

.PHONY: install demo test bench docs

install:
	$(PIP) -e '.[dev]'

demo: install
	$(PYTHON) -m crasp demo --out demo-output

test: install
	$(PYTHON) -m pytest -n 2 -q

bench: install
	$(PYTHON) benchmarks/interpreter.py

docs: install
	$(PIP) -e '.[docs]'
	$(PYTHON) -m mkdocs build --strict
