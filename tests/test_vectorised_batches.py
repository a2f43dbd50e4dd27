"""Training batches drawn on the device (tasks.vectorised, validation.data.device; TrainConfig.sampler
= "device") against the Python samplers they stand in for: every drawn example is the task's
reference example, each framed row is the collated one bit for bit, and lengths, offsets, answers
and inputs follow the Python samplers' distributions (two-sample tests on 3,000 examples, fixed
keys). Fixed training sets kept on the device are the Python sampler's sets, read in a random order."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
import torch
from scipy import stats

from tasks import registry, vectorised
from tasks.keyed_random import Draws
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.data.device import FixedSetStream, SampledStream, frame, token_counts
from validation.data.encoding import Encoding
from validation.data.feed import Feed, padded, widths
from validation.data.streams import TrainingStream, fixed_training_set
from validation.runs.spec import RunSpec
from validation.training.group import SeedGroup

SAMPLED = [task.name for task in registry.all_tasks() if task.sample_batch is not None]
DRAWS = 3_000
DISTRIBUTIONS = [name for name in SAMPLED if not name.startswith("xu_")] + [
    "xu_addition", "xu_multiplication", "xu_mod101_addition", "xu_mod50_multiplication"]
"""The tasks whose drawn distributions are tested (Xu et al.'s 16 tasks share one sampler: four of them)."""


def test_the_samplers_cover_the_tasks_the_presets_draw_on_the_fly():
    assert set(SAMPLED) >= {"bin_majority", "majority", "bin_majority_interleave", "parity", "repeat_copy",
                            "unique_copy", "sort", "addition", "duan_successor", "duan_addition",
                            "duan_parity_scratchpad", "duan_n_times_1", "xu_addition", "xu_multiplication",
                            "xu_mod101_addition", "xu_mod50_multiplication", "sabbaghi_addition",
                            "sabbaghi_multiplication", "sabbaghi_multiplication_1"}


def _inputs(task, drawn, b) -> tuple[str, ...]:
    return tuple(task.symbols[k] for k in drawn.inputs[b, :drawn.lengths[b]].tolist())


def _examples(task, draws: Draws) -> list:
    """The task's own examples for the drawn inputs, at the offsets the stream draws."""
    encoding = Encoding.of(task)
    drawn = task.sample_train_batch(draws)
    batch = frame(encoding, drawn)
    stream = SampledStream(task, encoding, draws.key[0], "cpu")
    offsets = stream.draw(int(draws.examples[0]), draws.count).positions[:, 0]
    return [task.example(_inputs(task, drawn, b), int(offsets[b])) for b in range(draws.count)], drawn, batch


@pytest.mark.parametrize("name", SAMPLED)
def test_drawn_examples_are_the_collated_reference_examples(name):
    task = registry.get(name)
    encoding = Encoding.of(task)
    examples, drawn, batch = _examples(task, Draws((3, 4), torch.arange(40)))
    for b, example in enumerate(examples):
        x = _inputs(task, drawn, b)
        assert task.valid(x)
        answer = task.answer(x)
        assert tuple(task.outputs[k] for k in drawn.answers[b, :drawn.answer_lengths[b]].tolist()) == \
            tuple(answer.values() if isinstance(answer, dict) else answer)  # an aligned task's outputs by position
        if drawn.measured is not None:
            assert int(drawn.measured[b]) == example.length
    assert torch.equal(token_counts(encoding, drawn), torch.tensor([len(e.tokens) for e in examples]))
    reference = encoding.collate([dataclasses.replace(e, offset=0) for e in examples])
    for field in ("ids", "positions", "targets", "mask"):
        got, want = getattr(batch, field), getattr(reference, field)
        assert got.dtype == want.dtype and torch.equal(got, want), (name, field)


def _python_sample(task, count: int) -> list:
    rng = np.random.default_rng(123)
    return [task.sample_train(rng) for _ in range(count)]


def _device_sample(task, count: int) -> list:
    encoding = Encoding.of(task)
    stream = SampledStream(task, encoding, 456, "cpu")
    drawn = task.sample_train_batch(Draws((456, 4), torch.arange(count)))
    offsets = stream.draw(0, count).positions[:, 0]
    return [task.example(_inputs(task, drawn, b), int(offsets[b])) for b in range(count)]


def _statistics(task, examples) -> dict[str, list]:
    start = len(task.prefix)
    if task.format.value == "aligned":  # the outputs sit under the input: every token after the prefix is input
        inputs = [e.tokens[start:] for e in examples]
    else:
        inputs = [e.tokens[start:start + len(e.tokens) - start - len(e.targets) - (1 if task.separator else 0)]
                  for e in examples]
    return {
        "length": [len(x) for x in inputs],
        "offset": [e.offset for e in examples],
        "answer": [e.targets[0] for e in examples],
        "first symbol": [x[0] if x else "" for x in inputs],
        "last symbol": [x[-1] if x else "" for x in inputs],
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


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_drawn_examples_follow_the_python_samplers_distribution(name):
    task = registry.get(name)
    python = _statistics(task, _python_sample(task, DRAWS))
    drawn = _statistics(task, _device_sample(task, DRAWS))
    for statistic in python:
        assert _same_distribution(python[statistic], drawn[statistic]) > 1e-4, statistic
    assert stats.ks_2samp(python["offset"], drawn["offset"]).pvalue > 1e-4


def test_the_distribution_test_tells_a_wrong_sampler():
    """bin_majority's inputs drawn with parity's sampler (ties not redrawn): the test says so."""
    task = registry.get("bin_majority")
    wrong = dataclasses.replace(task, sample_batch=vectorised.parity_bits)
    python = _statistics(task, _python_sample(task, DRAWS))
    drawn = _statistics(task, _device_sample(wrong, DRAWS))
    assert not any(python["tied"]) and any(drawn["tied"])
    assert _same_distribution(python["tied"], drawn["tied"]) < 1e-4


def test_an_example_is_a_pure_function_of_its_seed_and_index():
    """Example k is the same drawn alone, in a batch, after others, or in a rejection round of
    its own (majority redraws ties): what lets a stream's state be a count."""
    task = registry.get("majority")
    encoding = Encoding.of(task)
    stream = SampledStream(task, encoding, 5, "cpu")
    whole = stream.draw(0, 30)
    part = stream.draw(12, 6)
    width = part.ids.shape[-1]
    for field in ("ids", "positions", "targets", "mask"):
        assert torch.equal(getattr(padded(part, whole.ids.shape[-1], encoding.id("<pad>")), field)[:, :width],
                           getattr(whole, field)[12:18, :width]), field
    assert not torch.equal(SampledStream(task, encoding, 6, "cpu").draw(0, 30).ids, whole.ids)


@pytest.mark.parametrize("name", ["tomita_4", "sabbaghi_addition", "xu_addition"])
def test_a_fixed_set_on_the_device_is_the_python_set_in_a_new_order_each_epoch(name):
    task = registry.get(name)
    encoding = Encoding.of(task)
    size = 12
    stream = FixedSetStream(task, encoding, 2, size, "cpu")
    reference = encoding.collate(fixed_training_set(task, size, 2))
    epochs = [stream.draw(k * size, size) for k in range(2)]
    rows = {tuple(r.tolist()) for r in reference.ids}
    for epoch in epochs:
        width = epoch.ids.shape[-1]
        assert {tuple(padded(epoch, reference.ids.shape[-1], encoding.id("<pad>")).ids[b].tolist())
                for b in range(size)} == rows, "each epoch reads every example once"
        assert epoch.ids.shape[-1] == width
    assert not torch.equal(epochs[0].ids, epochs[1].ids)  # another order


def test_offsets_of_a_fixed_set_follow_the_task_s_rule():
    task = registry.get("tomita_4")  # offsets uniform in [0, longest + 1]
    stream = FixedSetStream(task, Encoding.of(task), 0, 50, "cpu")
    offsets = stream.draw(0, 2_000).positions[:, 0]
    python = TrainingStream(task, 0, 50)
    reference = [e.offset for e in python.next(2_000)]
    assert int(offsets.min()) == 0 and int(offsets.max()) == max(reference)
    assert stats.ks_2samp(offsets.numpy(), reference).pvalue > 1e-4


def test_a_feed_draws_chunks_and_resumes_from_a_count():
    task = registry.get("sort")
    config = TrainConfig(batch_size=8, sampler="device")
    feed = Feed(task, Encoding.of(task), [0, 1], config, "cpu")
    first = [feed.next() for _ in range(3)]
    assert feed.state() == [{"used": 24}, {"used": 24}]
    resumed = Feed(task, Encoding.of(task), [0, 1], config, "cpu")
    resumed.restore(feed.state())
    following, again = feed.next(), resumed.next()
    assert all(torch.equal(a, b) for a, b in zip(following.tensors(), again.tensors()))
    alone = Feed(task, Encoding.of(task), [1], config, "cpu")
    one = alone.next()
    width = one.ids.shape[-1]
    assert torch.equal(first[0].ids[1, :, :width], one.ids[0])  # a seed's batch is its own, whatever its group


def test_a_group_trains_on_device_batches_and_resumes_them():
    config = TrainConfig(steps=20, batch_size=8, eval_every=10**6, test_size=2, sampler="device")
    task = registry.get("duan_addition")

    def group():
        return SeedGroup(task, Variant.parse("sinusoidal"), ModelConfig(1, 2, 16), config, seeds=(0, 1))

    first = group()
    losses = [first.train_step().clone() for _ in range(3)]
    assert all(torch.isfinite(loss).all() for loss in losses)
    saved = first.state()
    following = first.train_step().clone()
    second = group()
    second.restore(saved)
    assert torch.equal(second.train_step(), following)


def test_the_sampler_is_checked_and_keyed():
    with pytest.raises(ValidationError, match="sampler 'numpy' is not one of python, device, vectorised"):
        TrainConfig(sampler="numpy")
    config = TrainConfig(sampler="device")
    with pytest.raises(ValidationError, match="'copy_every_kth_k2' has no vectorised sampler"):
        SeedGroup(registry.get("copy_every_kth_k2"), Variant.parse("ape"), ModelConfig(1, 1, 8), config, seeds=(0,))
    with pytest.raises(ValidationError, match="replaced by 'device'"):
        SeedGroup(registry.get("sort"), Variant.parse("ape"), ModelConfig(1, 1, 8),
                  dataclasses.replace(config, sampler="vectorised"), seeds=(0,))
    with pytest.raises(ValidationError, match="'sabbaghi_addition_balanced' has no vectorised sampler"):
        SeedGroup(registry.get("sabbaghi_addition_balanced"), Variant.parse("rpe"), ModelConfig(1, 2, 8, encoder=True),
                  config, seeds=(0,))  # its carry cascades are drawn by the Python sampler
    custom = dataclasses.replace(registry.get("tomita_4"), train_offset=lambda example, rng: 0)
    with pytest.raises(ValidationError, match="drawn by a Python function"):
        FixedSetStream(custom, Encoding.of(custom), 0, 10, "cpu")
    plain = RunSpec("sort", "ape", ModelConfig(1, 1, 8), TrainConfig(), 0)
    assert "sampler" not in plain.to_json()["train"]  # every run stored before keeps its key
    assert dataclasses.replace(plain, train=config).key != plain.key


def test_a_preset_draws_on_the_device_only_where_its_plan_allows_it_overrides_included():
    from validation.config import Overrides
    from validation.runs.protocol import PRESETS, overridden

    paper = PRESETS["paper"]
    assert paper.plan(registry.get("tomita_4"), Variant.parse("ape")).train.sampler == "device"  # a fixed set
    on_the_fly = overridden(paper, Overrides.parse(["epochs=none"]))
    assert on_the_fly.plan(registry.get("tomita_4"), Variant.parse("ape")).train.sampler == "python"  # no sampler
    assert on_the_fly.plan(registry.get("sort"), Variant.parse("ape")).train.sampler == "device"
    assert PRESETS["cpu"].plan(registry.get("sort"), Variant.parse("ape")).train.sampler == "python"


def test_a_feed_rounds_every_step_s_width_up_to_its_quantum():
    task = registry.get("sort")
    feed = Feed(task, Encoding.of(task), [0, 1], TrainConfig(batch_size=4, sampler="device"), "cpu", quantum=16)
    for _ in range(20):
        batch = feed.next()
        assert batch.ids.shape[-1] % 16 == 0 and (batch.ids.shape[-1] - 16) < int(widths(batch).max())
