"""The CI part of the fuzz harness: a fixed sample of mutants and of generated programs.

Both must give no crash, no mismatch and no hang; on failure the (minimised) texts are printed.
The long run is ``python -m tests.fuzz.run`` (docs/fuzz.md).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings

from crasp.parser import parse
from crasp.printer import format_program
from crasp.strategies import programs

from .harness import Outcome, Pool, exercise, minimize, same_failure, same_tree
from .mutants import mutant

SEED = 100_000
SAMPLE = 300
BUDGET_S = 40.0
"""Mutants are no longer handed out after this many seconds (the sample takes about 15 s)."""
MINIMIZE_S = 10.0


def _report(failures: list[tuple[int, str, Outcome]], pool: Pool) -> str:
    shortest: dict[tuple, tuple[int, str, Outcome]] = {}
    for seed, text, outcome in failures:
        key = outcome.signature()
        if key not in shortest or len(text) < len(shortest[key][1]):
            shortest[key] = (seed, text, outcome)
    lines = [f"{len(failures)} failing mutants, {len(shortest)} distinct failures:"]
    for seed, text, outcome in list(shortest.values())[:5]:
        same = same_failure(outcome)
        small = minimize(text, lambda texts: same(pool.map(texts)), budget=200, seconds=MINIMIZE_S)
        shown = small if len(small) <= 2000 else small[:2000] + f"... ({len(small)} chars)"
        lines += [f"- mutant {seed}: {outcome.describe()}", f"  {outcome.traceback}".replace("\n", "\n  "),
                  "  minimised text:", "    " + shown.replace("\n", "\n    ")]
    return "\n".join(lines)


def test_mutants_do_not_crash_mismatch_or_hang():
    failures: list[tuple[int, str, Outcome]] = []
    ran = 0
    with Pool(jobs=2, timeout=10.0) as pool:
        start = time.monotonic()
        items = ((s, mutant(s)) for s in range(SEED, SEED + SAMPLE)
                 if time.monotonic() - start < BUDGET_S)
        for seed, text, outcome in pool.imap(items):
            ran += 1
            if outcome.failed:
                failures.append((seed, text, outcome))
        message = _report(failures, pool) if failures else ""
    assert ran >= SAMPLE // 3, f"only {ran} of {SAMPLE} mutants ran in {BUDGET_S} s"
    if failures:
        pytest.fail(message, pytrace=False)


# parse may raise Python's recursion limit once, so that deep programs parse; Hypothesis warns.
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(derandomize=True, max_examples=80, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(max_definitions=5, max_depth=3))
def test_generated_programs_survive_the_pipeline(program):
    text = format_program(program)
    assert same_tree(parse(text).statements, program.statements), f"format/parse changed:\n{text}"
    outcome = exercise(text, timeout=10.0)
    assert not outcome.failed, f"{outcome.describe()}\n{outcome.traceback}\nprogram:\n{text}"
