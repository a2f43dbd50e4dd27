"""Every failure the fuzz harness found, by a minimised program text, so that none comes back.

Each case's id says what the text did when it was found: the stage, the exception and the
project line (for a RecursionError, the line that recursed). The case checks the outcome the
text must have now: ``ERROR`` (a clean :class:`CraspError`), ``OK``, or ``CLEAN`` (either,
where the language's limits decide which). The texts run in a worker process with the fuzz
run's memory and time limits, so a regressed hang or memory blow-up fails the case instead of
stopping the suite.
"""

from __future__ import annotations

import pytest

from .harness import Pool

ERROR = ("error",)
OK = ("ok",)
CLEAN = ("error", "ok")
TIMEOUT = 10.0


def _counts(depth: int) -> str:
    """``#(#(...#("a") > 0 ...) > 0) > 0``: counts nested ``depth`` deep."""
    text = '"a"'
    for _ in range(depth):
        text = f"#({text}) > 0"
    return text


CASES = [
    # Found by `python -m tests.fuzz.run --mutants 10000 --seed 0` (the first release run).
    pytest.param('A = ' + '!' * 3000 + '"a"', CLEAN,
                 id="parse-RecursionError-parser.py:48-deep-not"),
    pytest.param('A = #' + '!' * 500 + '"a" > 0', CLEAN,
                 id="parse-RecursionError-parser.py:48-count-of-deep-not"),
    pytest.param('A = ' + '!' * 400 + '"a"', CLEAN,
                 id="check-RecursionError-checker.py:333-not-400"),
    pytest.param('A = "a"' + ' && "a"' * 400, CLEAN,
                 id="check-RecursionError-checker.py:333-and-chain-400"),
    pytest.param('A = 1' + ' + 1' * 400 + ' > 0', CLEAN,
                 id="check-RecursionError-checker.py:333-sum-chain-400"),
    pytest.param('A = 1' + '0' * 4300, ERROR,
                 id="parse-VisitError-ValueError-parser.py:48-4301-digit-integer"),
    pytest.param('A = #"a" == 1' + '0' * 4999, ERROR,
                 id="parse-VisitError-ValueError-parser.py:48-5000-digit-integer"),
    pytest.param('A = #(i mod 10000000000000000000 in {}) == 1', CLEAN,
                 id="interpret-ValueError-interpreter.py:154-modulus-1e19"),
    pytest.param('A = #[i - j == 100000000] "a" > 0', CLEAN,
                 id="hang-checker.py:99-guard-offset-1e8"),
    # Found while minimising the classes above by hand (same bugs, other places).
    pytest.param('A = i mod 1000000000000000000 in {0}', CLEAN,
                 id="interpret-MemoryError-interpreter.py:154-modulus-1e18"),
    pytest.param('A = i mod 4294967296 in {0}', CLEAN,
                 id="interpret-MemoryError-interpreter.py:154-modulus-2^32"),
    pytest.param('A = #[i - j <= 1000000000000] "a" > 0', CLEAN,
                 id="check-MemoryError-checker.py:99-guard-window-1e12"),
    pytest.param('A = #[i - j in {1000000000000000000}] "a" > 0', CLEAN,
                 id="compile-ValueError-compiler.py:687-guard-offset-1e18"),
    pytest.param('A = ' + 'min(' * 250 + '1' + ', 1)' * 250 + ' > 0', CLEAN,
                 id="compile-RecursionError-compiler.py:388-min-250"),
    pytest.param('A = ' + _counts(200), CLEAN,
                 id="format-RecursionError-printer.py:57-nested-counts-200"),
]


@pytest.fixture(scope="module")
def pool():
    with Pool(jobs=1, timeout=TIMEOUT, grace=5.0) as workers:
        yield workers


@pytest.mark.parametrize("text, expected", CASES)
def test_found_failure_stays_fixed(pool, text, expected):
    (outcome,) = pool.map([text])
    shown = text if len(text) <= 300 else text[:300] + f"... ({len(text)} chars)"
    assert outcome.kind in expected, f"{outcome.describe()}\n{outcome.traceback}\ntext: {shown}"
