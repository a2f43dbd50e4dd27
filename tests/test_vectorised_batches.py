"""Vectorised training batches (tasks.vectorised, TrainConfig.sampler = "vectorised") against the
Python samplers they stand in for: every drawn example is the task's reference example, the
batch is the collated one bit for bit, and lengths, offsets, answers and inputs follow the
Python samplers' distributions (two-sample tests on 3,000 examples, fixed seeds)."""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter

import numpy as np
import pytest
import torch
from scipy import stats

from tasks import registry, vectorised
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.runs.spec import RunSpec
from validation.data.encoding import Encoding
from validation.data.streams import TrainingStream, VectorisedStream
from validation.training.group import SeedGroup

SAMPLED = [task.name for task in registry.all_tasks() if task.sample_batch is not None]
DRAWS = 3_000


def test_the_samplers_cover_the_algorithmic_tasks_they_were_written_for():
    assert set(SAMPLED) >= {"bin_majority", "majority", "bin_majority_interleave", "parity", "repeat_copy",
                            "unique_copy", "sort", "addition"}


def _examples(task, drawn) -> list:
    """The task's own examples for the drawn inputs and offsets."""
    return [task.example(tuple(task.symbols[k] for k in drawn.inputs[b, :drawn.lengths[b]]), int(drawn.offsets[b]))
            for b in range(len(drawn.lengths))]


@pytest.mark.parametrize("name", SAMPLED)
def test_drawn_batches_are_the_collated_reference_examples(name):
    task = registry.get(name)
    encoding = Encoding.of(task)
    streams = [VectorisedStream(task, seed) for seed in (0, 1, 2)]
    drawn = [stream.next(40) for stream in streams]
    batch = encoding.batch_of(drawn)
    width = batch.ids.shape[-1]
    for s, seed_drawn in enumerate(drawn):
        examples = _examples(task, seed_drawn)
        for b in range(len(examples)):
            x = tuple(task.symbols[k] for k in seed_drawn.inputs[b, :seed_drawn.lengths[b]])
            assert task.valid(x)
            assert tuple(task.outputs[k] for k in seed_drawn.answers[b, :seed_drawn.answer_lengths[b]]) == \
                tuple(task.answer(x))
        reference = encoding.collate(examples)
        pad = width - reference.ids.shape[-1]  # the group's width: pad positions repeat the last id
        expected = {
            "ids": torch.nn.functional.pad(reference.ids, (0, pad), value=encoding.id("<pad>")),
            "positions": torch.cat([reference.positions, reference.positions[:, -1:].expand(-1, pad)], dim=1),
            "targets": torch.nn.functional.pad(reference.targets, (0, pad), value=-100),
            "mask": torch.nn.functional.pad(reference.mask, (0, pad), value=False),
        }
        for field, want in expected.items():
            got = getattr(batch, field)[s]
            assert got.dtype == want.dtype and torch.equal(got, want), (name, field)


def _python_sample(task, count: int) -> list:
    rng = np.random.default_rng(123)
    return [task.sample_train(rng) for _ in range(count)]


def _vectorised_sample(task, count: int, sampler=None) -> list:
    rng = np.random.default_rng(456)
    sampler = sampler or task.sample_batch
    low, high = task.train_range
    return _examples(task, sampler(rng, count, max(low, task.min_length), high))


def _statistics(task, examples) -> dict[str, list]:
    start = len(task.prefix)
    inputs = [e.tokens[start:start + len(e.tokens) - start - len(e.targets) - (1 if task.separator else 0)]
              for e in examples]
    return {
        "length": [len(x) for x in inputs],
        "offset": [e.offset for e in examples],
        "answer": [e.targets[0] for e in examples],
        "first symbol": [x[0] if x else "" for x in inputs],
        "count of the first symbol": [x.count(task.symbols[0]) for x in inputs],
        "distinct symbols": [len(set(x)) for x in inputs],
        "tied": [2 * x.count(task.symbols[0]) == len(x) for x in inputs],
    }


def _same_distribution(left: list, right: list) -> float:
    """The p-value of a chi-square test that two samples of a discrete variable share a distribution."""
    values = sorted(set(left) | set(right), key=str)
    a, b = Counter(left), Counter(right)
    table = np.array([[a[v] for v in values], [b[v] for v in values]])
    table = table[:, table.sum(0) >= 10]  # values seen too rarely in both are left out of the test
    if table.shape[1] < 2:
        return 1.0
    return float(stats.chi2_contingency(table).pvalue)


@pytest.mark.parametrize("name", SAMPLED)
def test_drawn_examples_follow_the_python_samplers_distribution(name):
    task = registry.get(name)
    python = _statistics(task, _python_sample(task, DRAWS))
    drawn = _statistics(task, _vectorised_sample(task, DRAWS))
    for statistic in python:
        assert _same_distribution(python[statistic], drawn[statistic]) > 1e-4, statistic
    assert stats.ks_2samp(python["offset"], drawn["offset"]).pvalue > 1e-4


def test_the_distribution_test_tells_a_wrong_sampler():
    """bin_majority's inputs drawn with parity's sampler (ties not redrawn): the test says so."""
    task = registry.get("bin_majority")
    wrong = dataclasses.replace(task, sample_batch=lambda rng, count, low, high: vectorised.parity_bits(
        rng, count, low, high, offset_room=lambda lengths: 150 - lengths))
    python = _statistics(task, _python_sample(task, DRAWS))
    drawn = _statistics(task, _vectorised_sample(wrong, DRAWS))
    assert not any(python["tied"]) and any(drawn["tied"])
    assert _same_distribution(python["tied"], drawn["tied"]) < 1e-4


def test_a_group_trains_on_vectorised_batches_and_resumes_them():
    config = TrainConfig(steps=20, batch_size=8, eval_every=10**6, test_size=2, sampler="vectorised")
    task = registry.get("sort")

    def group():
        return SeedGroup(task, Variant.parse("ape"), ModelConfig(1, 2, 16), config, seeds=(0, 1))

    first = group()
    losses = [first.train_step() for _ in range(3)]
    assert all(torch.isfinite(loss).all() for loss in losses)
    saved = copy.deepcopy(first.state())  # on the CPU the state shares the live tensors
    following = first.train_step()
    second = group()
    second.restore(saved)
    assert torch.equal(second.train_step(), following)
    python = SeedGroup(task, Variant.parse("ape"), ModelConfig(1, 2, 16), dataclasses.replace(config, sampler="python"),
                       seeds=(0, 1))
    assert not torch.equal(python.train_step(), losses[0])  # another stream of examples


def test_a_seed_draws_the_same_examples_whatever_its_group():
    config = TrainConfig(steps=20, batch_size=8, eval_every=10**6, test_size=2, sampler="vectorised")
    task = registry.get("bin_majority")
    alone = SeedGroup(task, Variant.parse("ape"), ModelConfig(1, 1, 8), config, seeds=(1,))._train_batch()
    together = SeedGroup(task, Variant.parse("ape"), ModelConfig(1, 1, 8), config, seeds=(0, 1))._train_batch()
    width = alone.ids.shape[-1]
    assert torch.equal(together.ids[1, :, :width], alone.ids[0])
    assert (together.ids[1, :, width:] == Encoding.of(task).id("<pad>")).all()


def test_dropout_groups_draw_each_seed_s_own_batch():
    config = TrainConfig(steps=20, batch_size=4, eval_every=10**6, test_size=2, sampler="vectorised")
    group = SeedGroup(registry.get("parity"), Variant.parse("ape"), ModelConfig(1, 1, 8, dropout=0.1), config,
                      seeds=(0, 1))
    assert torch.isfinite(group.train_step()).all()


def test_the_sampler_is_checked_and_keyed():
    with pytest.raises(ValidationError, match="sampler 'numpy' is not one of python, vectorised"):
        TrainConfig(sampler="numpy")
    config = TrainConfig(sampler="vectorised")
    with pytest.raises(ValidationError, match="'xu_addition' has no vectorised sampler"):
        SeedGroup(registry.get("xu_addition"), Variant.parse("ape"), ModelConfig(1, 1, 8), config, seeds=(0,))
    with pytest.raises(ValidationError, match="fixed training set"):
        SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), ModelConfig(1, 1, 8),
                  dataclasses.replace(config, epochs=1, train_size=10), seeds=(0,))
    plain = RunSpec("sort", "ape", ModelConfig(1, 1, 8), TrainConfig(), 0)
    assert "sampler" not in plain.to_json()["train"]  # every run stored before keeps its key
    assert dataclasses.replace(plain, train=config).key != plain.key


def test_python_and_vectorised_streams_both_restore_what_they_saved():
    task = registry.get("majority")
    for make in (lambda: TrainingStream(task, 3), lambda: VectorisedStream(task, 3)):
        stream = make()
        stream.next(5)
        saved = stream.state()
        after = stream.next(5)
        again = make()
        again.restore(saved)
        repeated = again.next(5)
        if isinstance(after, list):
            assert after == repeated
        else:
            assert all(np.array_equal(getattr(after, f), getattr(repeated, f)) for f in ("inputs", "offsets"))
