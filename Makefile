# Set-up on a fresh machine: `make demo` runs the demo, `make test` runs the tests.
# Both install what they need first. Python 3.11+ with pip is the only prerequisite.

PYTHON ?= python3
PIP := $(PYTHON) -m pip install --quiet --disable-pip-version-check

.PHONY: install demo test fast bench docs

install:
	$(PIP) -e '.[dev]'

demo: install
	$(PYTHON) -m crasp demo --out demo-output

test: install
	$(PYTHON) -m pytest -n 2 -q

# The edit loop: everything but the training harness (a minute or two on 2 cores).
fast: install
	$(PYTHON) -m pytest -n 2 -q -x --ignore=validation --ignore=docs/validation.md --ignore=docs/arithmetic.md \
		--ignore=tests/test_validation.py --ignore=tests/test_validation_variants.py --ignore=tests/test_duan.py \
		--ignore=tests/test_arithmetic_experiments.py --ignore=tests/test_gpu.py

bench: install
	$(PYTHON) benchmarks/interpreter.py

docs: install
	$(PIP) -e '.[docs]'
	$(PYTHON) -m mkdocs build --strict
