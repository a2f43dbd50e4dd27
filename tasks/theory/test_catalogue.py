"""The quick catalogue of the theory's statements, one test per statement.

``pytest --pyargs tasks.theory`` runs it on the installed package; in the repository's own suite
this module is the one place the quick catalogue runs (the planted bugs that show each statement
can fail are in tests/test_theory_planted.py).
"""

import pytest

from tasks.theory.run import PROFILES, budgets
from tasks.theory.statements import CATALOGUE


@pytest.mark.parametrize("statement", CATALOGUE, ids=[statement.name for statement in CATALOGUE])
def test_statement_holds_on_the_quick_profile(statement):
    (budget,) = budgets(PROFILES["quick"], [statement])
    outcome = statement.run(budget)
    assert outcome.passed, outcome.report()
    assert outcome.examples >= 1
