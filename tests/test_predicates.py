"""The predicate registry checks declarations against the functions it is given."""

import pytest

from crasp import RegistryError, accepts, check, parse
from crasp.predicates import BinaryPredicate, PredicateRegistry, UnaryPredicate


def test_declared_period_is_checked():
    registry = PredicateRegistry()
    registry.register_unary("every3", lambda p: p % 3 == 1, period=3)  # 0-based p
    assert registry["every3"] == UnaryPredicate("every3", 3, frozenset({2}))
    with pytest.raises(RegistryError, match="not periodic with period 2"):
        registry.register_unary("every3b", lambda p: p % 3 == 1, period=2)
    with pytest.raises(RegistryError, match="not periodic"):
        registry.register_unary("small", lambda p: p < 5, period=4)


def test_declared_offsets_are_checked():
    registry = PredicateRegistry()
    registry.register_binary("near", lambda i, j: 0 < i - j <= 2, offsets={1, 2})
    assert registry["near"] == BinaryPredicate("near", frozenset({1, 2}))
    with pytest.raises(RegistryError, match="does not match its declared offsets"):
        registry.register_binary("far", lambda i, j: i - j >= 2, offsets={2, 3})


def test_bad_declarations():
    registry = PredicateRegistry()
    with pytest.raises(RegistryError, match="offsets i - j must be >= 0"):
        registry.add(BinaryPredicate("back", frozenset({-1})))
    with pytest.raises(RegistryError, match="residues must lie"):
        registry.add(UnaryPredicate("odd", 2, frozenset({3})))
    with pytest.raises(RegistryError, match="not an identifier"):
        registry.add(UnaryPredicate("two words", 2, frozenset({1})))
    registry.add(UnaryPredicate("odd", 2, frozenset({1})))
    with pytest.raises(RegistryError, match="already registered differently"):
        registry.add(UnaryPredicate("odd", 2, frozenset({0})))


def test_user_registry_reaches_the_checker_and_interpreter():
    registry = PredicateRegistry()
    registry.register_binary("back2", lambda i, j: j == i - 2, offsets={2})
    program = parse('#import back2\nA = #[back2] "a" >= 1 && "b"')
    checked = check(program, registry)
    assert checked.info.offsets == frozenset({2})
    assert accepts(checked, "a b b") and not accepts(checked, "b a b")


def test_c_rasp_position_convention():
    # pos_even is 0-based even, i.e. 1-based odd: true at the first token.
    program = parse("#import pos_even\nC = #pos_even\nA = C == 1")
    assert accepts(program, "a", offset=0, allow_unknown=True)
    assert not accepts(program, "a", offset=1, allow_unknown=True)
