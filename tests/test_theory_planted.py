"""Every statement of the theory's catalogue catches a bug of the kind it exists to catch.

For each statement a bug is planted through the statement's own seams (the functions it checks,
passed as keyword arguments): an off-by-one in the compiled model's positions, an offset leaking
into a plain program, Bob off by one, a certificate built from the wrong automaton, an L_k program
of the wrong depth, ... The property must FAIL, and the counterexample Hypothesis shrank must be
small: a few definitions, states or tokens. The quick catalogue itself (the real functions) runs in
tasks/theory/test_catalogue.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from crasp import ast
from crasp.checker import check
from crasp.theorem12 import alice, bob
from tasks.depth_languages import alternating_blocks
from tasks.engine import contained
from tasks.findings import Verdict
from tasks.regular.blocks import recognizer
from tasks.regular.decide import Decision, decide_nope
from tasks.regular.program import program_for
from tasks.theory.statements import (
    CATALOGUE, Budget, compile_model, evaluate_program, model_outputs, named, translate_to_ape,
)

BUDGET = Budget(examples=200, seed=1)


def _fails(name: str, **seams):
    outcome = named(name).run(BUDGET, **seams)
    assert not outcome.passed, f"{name} did not catch the planted bug in {outcome.examples} examples"
    assert outcome.example is not None and outcome.counterexample and outcome.message
    assert outcome.line().startswith(f"FAIL {name} (")
    return outcome


def _small_program(program: ast.Program, definitions: int = 2) -> None:
    assert len(program.definitions) <= definitions, program


# ---------------------------------------------------------------- offsets


def test_an_offset_leaking_into_a_plain_program_is_caught():
    def leaky(checked, tokens, offset):  # positions before the input seem to exist
        pad = offset % 2
        return {name: values[pad:] for name, values in evaluate_program(checked, ["b"] * pad + list(tokens), 0).items()}

    outcome = _fails("plain-offset-invariance", evaluate=leaky)
    _small_program(outcome.example["program"])
    assert len(outcome.example["tokens"]) <= 2
    assert "the program at offset" in outcome.message


def test_a_periodic_predicate_reading_the_offset_wrongly_is_caught():
    def shifted(checked, tokens, offset):  # an offset past the first is read one position too far
        return evaluate_program(checked, tokens, offset + (offset > 0))

    outcome = _fails("period-shift-invariance", evaluate=shifted)
    _small_program(outcome.example["program"])
    assert len(outcome.example["tokens"]) <= 2
    assert outcome.example["program"] != ast.Program(()) and not check(outcome.example["program"]).info.plain


# ---------------------------------------------------------------- the compiled model and its translation


def test_an_off_by_one_in_the_compiled_models_positions_is_caught():
    def off_by_one(model, tokens, offset):
        return model_outputs(model, tokens, offset + 1)

    outcome = _fails("compiled-equals-program", execute=off_by_one)
    _small_program(outcome.example["program"])
    assert len(outcome.example["tokens"]) <= 3
    assert "the compiled model" in outcome.message


def test_an_off_by_one_in_the_ape_positional_table_is_caught():
    import torch

    def rolled(model, n_positions):
        ape = translate_to_ape(model, n_positions)
        ape.W_pos.data = torch.roll(ape.W_pos.data, 1, 0)  # position p gets the vector of p - 1
        return ape

    outcome = _fails("ape-translation-equals-program", translate=rolled)
    _small_program(outcome.example["program"])
    assert len(outcome.example["tokens"]) <= 3
    assert "the APE translation for N = 24" in outcome.message


# ---------------------------------------------------------------- Theorem 12


def test_bob_off_by_one_is_caught():
    def bob_off_by_one(checked, message, tokens, **options):
        wrong = dataclasses.replace(message, totals={count: total + 1 for count, total in message.totals.items()})
        return bob(checked, wrong, tokens, **options)

    outcome = _fails("theorem12-protocol", bob=bob_off_by_one)
    _small_program(outcome.example["program"])
    assert len(outcome.example["tokens"]) <= 2
    assert "Bob" in outcome.message


def test_alice_sending_more_than_her_counts_is_caught():
    def alice_reads_everything(checked, tokens, *, split, **options):  # her totals count Bob's tokens too
        return dataclasses.replace(alice(checked, tokens, split=len(tokens), **options), split=split)

    outcome = _fails("theorem12-protocol", alice=alice_reads_everything)
    _small_program(outcome.example["program"])
    assert len(outcome.example["tokens"]) <= 2
    assert "does not fit in" in outcome.message


# ---------------------------------------------------------------- the regular-language decision


def test_a_certificate_built_from_the_wrong_automaton_is_caught():
    outcome = _fails("regular-certificates", build=lambda dfa: program_for(dfa.complement()))
    assert outcome.example["automaton"].n_states <= 2
    assert "which the automaton" in outcome.message


def test_a_not_in_decision_with_a_made_up_witness_is_caught():
    made_up = ("the word 'a' permutes the states 0 -> 1 -> 0 (a cycle of length 2), so a^k never equals a^(k+1): "
               "the syntactic monoid contains a non-trivial group")

    def decide(dfa):
        found = decide_nope(dfa)
        return Decision(False, "not aperiodic", made_up, "", ()) if found.member else found

    outcome = _fails("regular-certificates", decide=decide,
                     build=lambda dfa: program_for(dfa) if decide(dfa).member else None)
    assert outcome.example["automaton"].n_states <= 2
    assert "takes state" in outcome.message or "not a cycle" in outcome.message or "in the obstruction" in outcome.message


def test_a_wrong_procedure_witness_is_caught():
    from tasks.regular import from_regex
    from tasks.regular.decide import PROCEDURE
    from tasks.regular.monoid import strongly_connected_components
    from tasks.theory.statements import Violation, check_procedure_witness

    def decide(dfa):  # the balanced-potential procedure claims two separable states are inseparable
        found = decide_nope(dfa)
        cyclic = [c for c in strongly_connected_components([sorted(set(r)) for r in dfa.table]) if len(c) > 1]
        if not found.member or not cyclic:
            return found
        states = cyclic[0]
        claim = (f"states {states[0]} and {states[1]} of the component {{{', '.join(map(str, states))}}} are not "
                 "separated by any balanced counting term")
        return Decision(False, PROCEDURE, claim, "", ())

    dfa = from_regex("(ab|ba)*", "ab")  # the procedure separates every state of its component {0, 1, 2}
    with pytest.raises(Violation, match="separates states 0 and 1"):
        check_procedure_witness(dfa, decide(dfa).obstruction)
    outcome = _fails("regular-certificates", decide=decide,
                     build=lambda dfa: program_for(dfa) if decide(dfa).member else None)
    assert outcome.example["automaton"].n_states <= 4 and "separates states" in outcome.message


# ---------------------------------------------------------------- the depth hierarchy


def test_an_l_k_program_of_the_wrong_depth_is_caught():
    outcome = _fails("depth-hierarchy-programs", recognizer=lambda k: recognizer(k + 1))
    assert outcome.example["k"] == 2 and len(outcome.example["word"]) <= 4


def test_a_prediction_program_for_the_wrong_language_is_caught():
    outcome = _fails("depth-hierarchy-programs", predictor=lambda k: alternating_blocks(k + 1))
    assert outcome.example["k"] == 2 and len(outcome.example["word"]) <= 4
    assert "prediction program" in outcome.message


# ---------------------------------------------------------------- containment


def test_a_checker_that_calls_counting_positional_is_caught():
    def checker(program):
        checked = check(program)
        return dataclasses.replace(checked, info=dataclasses.replace(checked.info, plain=checked.info.plain
                                                                      and checked.info.depth == 0))

    outcome = _fails("plain-in-periodic-local", checker=checker)
    _small_program(outcome.example["program"])  # a count, and the Boolean output after it
    assert "plain" in outcome.message


def test_a_compiled_plain_program_with_a_positional_bias_is_caught():
    def biased(checked):
        model = compile_model(checked)
        for block in model.blocks:
            block.attn.phi_tail.data[:] = 0.5
        return model

    outcome = _fails("plain-in-periodic-local", compile=biased)
    _small_program(outcome.example["program"], 1)
    assert "LOCAL" in outcome.message


def test_containment_carried_the_wrong_way_is_caught():
    def backwards(own):
        other = {"ape": "nope", "nope": "ape"}
        claim = {"ape": Verdict.FAILS, "nope": Verdict.GENERALIZES}  # the converse of containment
        return {scheme: (*own[scheme], *[dataclasses.replace(f, carried_from=other[scheme])
                                          for f in own[other[scheme]] if f.decisive and f.claim is claim[scheme]])
                for scheme in own}

    outcome = _fails("nope-verdicts-carry-to-ape", contain=backwards)
    assert len(outcome.example["ape"]) + len(outcome.example["nope"]) == 1


def test_containment_is_what_the_engine_does():
    """The real containment passes (the catalogue's run, cheaply): the planted ones differ from it."""
    assert named("nope-verdicts-carry-to-ape").run(Budget(examples=50), contain=contained).passed


def test_every_statement_has_a_planted_bug_here():
    source = open(__file__, encoding="utf-8").read()
    assert all(f'"{statement.name}"' in source for statement in CATALOGUE)
