"""Sets of tasks written the way a user writes them, each with its ground truth argued in its
module, predicted at the default budget (the sequence set with twice its search time: synthesis
decides it, and a loaded machine must not turn a program the timed search finds into "undetermined";
the default's speed is a benchmark's, not a test's): no verdict is wrong, at least 90% of the APE
and NoPE verdicts are decided, and every program found passes `crasp verify` and compiles exactly.

tests/positional_user_tasks.py holds accept, next-character-set and one-token tasks that need
positions (the positional construction decides them); tests/sequence_user_tasks.py holds seq2seq
tasks with multi-token outputs (synthesis and the communication checker decide them).
"""

from __future__ import annotations

import dataclasses
import importlib
import io

import numpy as np
import pytest

from crasp.checker import check
from crasp.cli import main
from crasp.printer import format_program
from limit_transformer import compile
from limit_transformer.agreement import compare
from tasks import catalogue
from tasks.findings import DEFAULT
from tasks.predict import predict

SETS = ["positional_user_tasks", "sequence_user_tasks"]
BUDGETS = {"positional_user_tasks": DEFAULT,
           "sequence_user_tasks": dataclasses.replace(DEFAULT, seconds=2 * DEFAULT.seconds)}


@pytest.fixture(scope="module", params=SETS)
def user_set(request):
    module = importlib.import_module(f"tests.{request.param}")
    predictions = {name: predict(module.TASKS[name], budget=BUDGETS[request.param]) for name in sorted(module.TRUTH)}
    return module, predictions


def test_user_tasks_are_never_wrong_and_mostly_decided(user_set):
    module, predictions = user_set
    decided = 0
    for name, prediction in predictions.items():
        for scheme, truth in zip(("ape", "nope"), module.TRUTH[name]):
            verdict = prediction.verdict(scheme)
            expected = "generalizes" if truth else "does not generalize"
            assert verdict.verdict.value in (expected, "undetermined"), (name, scheme, verdict.headline)
            decided += verdict.verdict.value != "undetermined"
    assert len(predictions) >= 8 and decided >= 0.9 * 2 * len(predictions), decided


def test_every_program_found_for_a_user_task_verifies_and_compiles_exactly(user_set, tmp_path):
    module, predictions = user_set
    programs = 0
    for name, prediction in predictions.items():
        program = prediction.verdict("ape").program
        if program is None:
            continue
        programs += 1
        path = tmp_path / f"{name}.cr"
        path.write_text(format_program(program))
        task = module.TASKS[name]
        registered = dataclasses.replace(task, name=f"{name}_verify")
        catalogue.register(registered)
        try:
            status = main(["verify", registered.name, "--program", str(path), "--samples", "20"],
                          io.StringIO(), io.StringIO())
        finally:
            catalogue._REGISTRY.pop(registered.name, None)
        assert status == 0, name
        checked = check(program)
        rng = np.random.default_rng(5)
        examples = [task.sample(int(n), rng) for n in rng.integers(max(task.min_length, 1), 40, size=6)]
        report = compare(compile(checked), checked, [list(e.tokens) for e in examples], [e.offset for e in examples])
        assert report.ok, (name, report.summary())
    assert programs >= sum(truth[0] for truth in module.TRUTH.values()) * 0.9
