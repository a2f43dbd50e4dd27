"""Duan et al.'s encoder-decoder and attention biases: line geometry against a definition written
on token strings, biases against a per-pair loop, masks by perturbation, calibration on synthetic
attention, frozen tables in training, and the two-stage ABC run through the store."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tasks
from tasks import registry
from validation.models import attention_bias as lines
from validation.runs import protocol
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.data.encoding import IGNORE, Encoding, exact_rows
from validation.models.seq2seq import EncoderDecoder
from validation.models.calibration import calibrate
from validation.runs.store import Store
from validation.runs.sweep import validate
from validation.training.group import SeedGroup
from validation.models.build import overwrite

DUAN = ("duan_successor", "duan_addition", "duan_n_times_1", "duan_parity_scratchpad")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The models trained here are tiny (width 32, batches of 64): a second torch thread saves them
    nothing, and under `pytest -n 2` on 2 cores, with the other worker busy, its parallel regions
    wait on a thread that has no core: the trainings took several times longer, spinning."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _batch(task_name: str, lengths, seed: int = 0):
    task = registry.get(task_name)
    rng = np.random.default_rng(seed)
    examples = [task.sample_bin(n, n, 1, rng)[0] for n in lengths]
    encoding = Encoding.of(task)
    return task, encoding, examples, encoding.collate(examples)


def _naive_offset(family: lines.Family, tokens, t: int, u: int):
    """The line offset of query position t and key position u, from the token strings alone (None:
    not on a line of the family)."""
    sep = tokens.index("<sep>")
    if t < sep or t >= len(tokens) or tokens[t] == "<pad>":
        return None
    i = t - sep
    source = list(tokens[1:sep])
    if family.anchor == "target":
        if u < sep or u > t or tokens[u] == "<pad>":
            return None
        k = u - sep
        return k - i if family.moving else k
    if not 1 <= u < sep:
        return None
    j = u - 1
    ops = [p for p, token in enumerate(source) if token in ("+", "*")]
    if family.anchor == "start":
        r = j
    elif family.anchor == "end":
        r = len(source) - 1 - j
    elif not ops:
        return None
    elif family.anchor == "before_op":
        r = ops[0] - 1 - j
    else:
        r = j - ops[0] - 1
    if r < 0:
        return None
    return r - i if family.moving else r


@pytest.mark.parametrize("task_name", DUAN)
def test_line_offsets_match_a_definition_on_token_strings(task_name):
    task, encoding, examples, batch = _batch(task_name, [1, 3, 2, 5])
    model = EncoderDecoder(ModelConfig(1, 2, 16), encoding, Variant.parse("sinusoidal"))
    where = lines.layout(batch.ids, sep=model.sep, pad=model.pad, operators=model.operators)
    width = batch.ids.shape[1]
    for family in (*lines.CROSS, *lines.SELF):
        c, on = lines.offsets(family, where)
        for b, example in enumerate(examples):
            tokens = list(example.tokens) + ["<pad>"] * (width - len(example.tokens))
            for t in range(width):
                for u in range(width):
                    expected = _naive_offset(family, tokens, t, u)
                    assert bool(on[b, t, u]) == (expected is not None), (family, b, t, u)
                    if expected is not None:
                        assert int(c[b, t, u]) == expected


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(DUAN), st.lists(st.integers(1, 7), min_size=1, max_size=4), st.integers(0, 2**31 - 1))
def test_bias_is_the_largest_value_over_the_lines_through_a_pair(task_name, lengths, seed):
    task, encoding, examples, batch = _batch(task_name, lengths, seed)
    model = EncoderDecoder(ModelConfig(1, 2, 16), encoding, Variant.parse("sinusoidal"))
    where = lines.layout(batch.ids, sep=model.sep, pad=model.pad, operators=model.operators)
    half = 12
    generator = torch.Generator().manual_seed(seed)
    table = torch.rand(2, len(lines.CROSS), 2 * half + 1, generator=generator)
    table[table < 0.4] = lines.MASKED
    found = lines.bias(table, lines.CROSS, where)
    width = batch.ids.shape[1]
    for b, example in enumerate(examples):
        tokens = list(example.tokens) + ["<pad>"] * (width - len(example.tokens))
        for t in range(width):
            for u in range(width):
                best = torch.full((2,), lines.MASKED)
                for f, family in enumerate(lines.CROSS):
                    c = _naive_offset(family, tokens, t, u)
                    if c is not None and -half <= c <= half:
                        best = torch.maximum(best, table[:, f, c + half])
                assert torch.equal(found[b, :, t, u], best)


def test_scaffold_reads_the_aligned_digits_and_the_ones_before():
    task, encoding, examples, batch = _batch("duan_addition", [3])
    model = EncoderDecoder(ModelConfig(1, 1, 16), encoding, Variant.parse("abs"))
    where = lines.layout(batch.ids, sep=model.sep, pad=model.pad, operators=model.operators)
    cross = lines.bias(model.cross_bias, lines.CROSS, where)[0, 0]
    own = lines.bias(model.self_bias, lines.SELF, where)[0, 0]
    tokens = examples[0].tokens  # <bos> a2 a1 a0 + b2 b1 b0 <sep> y0 y1 y2 y3 <eos>
    sep = tokens.index("<sep>")
    for i in range(5):
        allowed = {u for u in range(len(tokens)) if cross[sep + i, u] == 0}
        on_window = {u for u in range(len(tokens)) for family in lines.alignment(tasks.get("duan_addition"))
                     if _naive_offset(family, tokens, sep + i, u) in (-1, 0)}
        assert allowed == on_window, i
        if i < 3:  # output i reads digit i and i - 1 (from the right) of both operands
            assert allowed == {p for d in (i, i - 1) if d >= 0 for p in (3 - d, 7 - d)}
        assert {u for u in range(len(tokens)) if own[sep + i, u] == 0} == {sep + i, sep + i - 1} - {sep - 1}


@pytest.mark.parametrize("variant", ["sinusoidal", "abs", "abc2"])
def test_outputs_depend_on_the_past_only_and_not_on_the_batch(variant):
    task, encoding, examples, batch = _batch("duan_addition", [2, 4])
    torch.manual_seed(0)
    model = EncoderDecoder(ModelConfig(2, 2, 16), encoding, Variant.parse(variant)).eval()
    if variant.startswith("abc"):
        overwrite(model, {"self_bias": torch.rand_like(model.self_bias), "cross_bias": torch.rand_like(model.cross_bias)})
    with torch.no_grad():
        together = model(batch.ids)
        alone = model(encoding.collate(examples[:1]).ids)
        n = len(examples[0].tokens)
        assert torch.allclose(together[0, :n], alone[0], atol=1e-5)
        changed = batch.ids.clone()
        last = len(examples[1].tokens) - 2
        changed[1, last] = (changed[1, last] + 1) % 10 + 3  # another digit as the last output token
        later = model(changed)
        assert torch.allclose(later[1, :last], together[1, :last], atol=1e-5)
        assert not torch.allclose(later[1, last], together[1, last])
        source = batch.ids.clone()
        source[1, 1] = 3 if int(source[1, 1]) != 3 else 4  # another leading digit
        assert not torch.allclose(model(source)[1, -3:], together[1, -3:])


@pytest.mark.parametrize("variant", ["sinusoidal", "abs"])
def test_dropout_acts_only_with_a_noise_key_and_adds_no_parameters(variant):
    task, encoding, examples, batch = _batch("duan_addition", [2, 4])
    torch.manual_seed(0)
    model = EncoderDecoder(ModelConfig(2, 2, 16, dropout=0.5), encoding, Variant.parse(variant))
    noise = torch.tensor([7919, 0])  # a seed's dropout key and a step
    with torch.no_grad():
        evaluated = model(batch.ids)
        assert torch.equal(model(batch.ids), evaluated)
        logits, (*_, (own, source)) = model(batch.ids, record=True)  # calibration reads undropped weights
        assert torch.allclose(logits, evaluated, atol=1e-5)
        assert torch.allclose(source.sum(-1), torch.ones_like(source.sum(-1)))
        dropped = model(batch.ids, noise=noise)
        assert not torch.allclose(dropped, evaluated) and torch.equal(dropped, model(batch.ids, noise=noise))
        plain = EncoderDecoder(ModelConfig(2, 2, 16), encoding, Variant.parse(variant))
        plain.load_state_dict(model.state_dict())
        assert torch.allclose(plain(batch.ids, noise=noise), evaluated, atol=1e-5)


def test_dropout_trains_the_encoder_decoder_reproducibly():
    task, drop = registry.get("duan_successor"), ModelConfig(1, 2, 16, dropout=0.3)
    quick = TrainConfig(steps=4, batch_size=8, eval_every=4, test_size=4)
    configs = (drop, drop, dataclasses.replace(drop, dropout=0.0))
    runs = [SeedGroup(task, Variant.parse("sinusoidal"), config, quick, seeds=(0,)) for config in configs]
    for group in runs:
        for _ in range(3):
            group.train_step()
    again, undropped = runs[1].params, runs[2].params
    for name, value in runs[0].params.items():
        assert torch.equal(again[name], value), name
    assert any(not torch.allclose(undropped[n], p, atol=1e-4) for n, p in runs[0].params.items())


def _attention_on(family: lines.Family, offset: int, where: lines.Layout, heads: int) -> torch.Tensor:
    """Attention weights that put every query's weight on its key of one line, where it has one."""
    c, on = lines.offsets(family, where)
    hit = (on & (c == offset)).float()
    weights = hit / hit.sum(-1, keepdim=True).clamp(min=1)
    return weights[:, None].expand(-1, heads, -1, -1)


def test_abc_variants_name_their_threshold_and_the_layers_they_read():
    assert Variant.parse("abc") == Variant("abc", "abc", kappa=4.5)
    assert Variant.parse("abc2") == Variant("abc2", "abc", kappa=2.0)
    assert Variant.parse("abc-layers") == Variant("abc-layers", "abc", kappa=4.5, every_layer=True)
    assert Variant.parse("abc1.5-layers") == Variant("abc1.5-layers", "abc", kappa=1.5, every_layer=True)
    for bad in ("abc.", "abc-layer", "abc2layers", "abc-layers-layers", "abs-layers", "sinusoidal-layers"):
        with pytest.raises(ValidationError, match="abc-layers"):
            Variant.parse(bad)


def test_calibration_keeps_the_line_the_attention_follows():
    task, encoding, examples, batch = _batch("duan_successor", [1, 2, 3, 4, 5, 6] * 4)
    model = EncoderDecoder(ModelConfig(1, 2, 16), encoding, Variant.parse("abc"))
    where = lines.layout(batch.ids, sep=model.sep, pad=model.pad, operators=model.operators)
    sums = lines.LineSums.empty(2, len(lines.CROSS), model.half_width)
    aligned = lines.Family("end", True)
    sums.add(_attention_on(aligned, 0, where, 2), lines.CROSS, where, where.target)
    table = lines.calibrated(sums, kappa=2.0)
    assert all("end:moving 0" in head for head in lines.kept(table, lines.CROSS))
    heaviest = sums.mass().nan_to_num(-1.0).flatten(1).argmax(1)
    assert heaviest.tolist() == [lines.CROSS.index(aligned) * (2 * model.half_width + 1) + model.half_width] * 2
    c, on = lines.offsets(aligned, where)
    outputs_on_it = float((on & (c == 0)).any(-1).sum()) / len(examples)  # each gives it weight 1
    assert table[0, lines.CROSS.index(aligned), model.half_width] == pytest.approx(outputs_on_it)
    strict = lines.calibrated(sums, kappa=100.0)
    assert lines.kept(strict, lines.CROSS) == [[], []]


def test_calibration_from_every_layer_is_the_union_of_each_layers_own_lines():
    small = dataclasses.replace(registry.get("duan_parity_scratchpad"), train_range=(1, 3), bins=((1, 3), (4, 6)))
    # 150 steps: a model exact on some of the inputs (14-27 of the 64 for seeds 0-3), each block with lines of its own
    group = SeedGroup(small, Variant.parse("sinusoidal"), ModelConfig(2, 2, 32),
                      TrainConfig(lr=3e-3, steps=150, warmup=20, eval_every=150, test_size=50), seeds=(0,))
    (result,) = group.run()
    model = EncoderDecoder(ModelConfig(2, 2, 32), Encoding.of(small), Variant.parse("sinusoidal"))
    model.load_state_dict(result.weights)
    encoding, examples = Encoding.of(small), small.sample_bin(1, 3, 64, np.random.default_rng(1))
    union_self, union_cross, used = calibrate(model, encoding, examples, kappa_cross=1.0, every_layer=True)
    last_self, last_cross, used_last = calibrate(model, encoding, examples, kappa_cross=1.0)
    assert used == used_last > 0
    assert not (torch.equal(union_self, last_self) and torch.equal(union_cross, last_cross))  # block 0 adds lines
    # the reference: each block's lines summed and thresholded on their own, straight from its weights
    batch = encoding.collate(examples)
    with torch.no_grad():
        logits, recorded = model.eval()(batch.ids, record=True)
    keep = exact_rows(logits, batch, uses_flags=False).nonzero().squeeze(-1)
    where = lines.layout(batch.ids[keep], sep=model.sep, pad=model.pad, operators=model.operators)
    own_tables, cross_tables = [], []
    for own_weights, cross_weights in recorded:
        own = lines.LineSums.empty(2, len(lines.SELF), model.half_width)
        cross = lines.LineSums.empty(2, len(lines.CROSS), model.half_width)
        own.add(own_weights[keep], lines.SELF, where, (batch.targets != IGNORE)[keep])
        cross.add(cross_weights[keep], lines.CROSS, where, (batch.targets != IGNORE)[keep])
        own_tables.append(lines.calibrated(own, lines.KAPPA_SELF))
        cross_tables.append(lines.calibrated(cross, 1.0))
    assert torch.allclose(last_self, own_tables[-1]) and torch.allclose(last_cross, cross_tables[-1])
    assert torch.allclose(union_self, torch.maximum(*own_tables))
    assert torch.allclose(union_cross, torch.maximum(*cross_tables))
    for union, tables, families in ((union_self, own_tables, lines.SELF), (union_cross, cross_tables, lines.CROSS)):
        for head in range(2):
            kept = set(lines.kept(union, families)[head])
            assert kept == set().union(*(lines.kept(t, families)[head] for t in tables))


def test_calibration_refuses_a_model_that_answers_nothing():
    task = registry.get("duan_successor")
    encoding = Encoding.of(task)
    model = EncoderDecoder(ModelConfig(1, 2, 16), encoding, Variant.parse("sinusoidal"))
    with pytest.raises(ValidationError, match="answers none of 8"):
        calibrate(model, encoding, task.sample_bin(3, 3, 8, np.random.default_rng(0)))


def test_bias_tables_stay_frozen_while_the_rest_trains():
    task = registry.get("duan_successor")
    group = SeedGroup(task, Variant.parse("abs"), ModelConfig(1, 2, 16),
                      TrainConfig(steps=3, batch_size=8, eval_every=3, test_size=4), seeds=(0, 1))
    before = {n: p.detach().clone() for n, p in group.params.items()}
    group.train_step()
    assert group.frozen == {"self_bias", "cross_bias"}
    for name, value in group.params.items():
        assert torch.equal(value, before[name]) == (name in group.frozen), name


def test_scaffolded_parity_generalizes_far_beyond_training():
    task = dataclasses.replace(registry.get("duan_parity_scratchpad"), train_range=(1, 6), bins=((1, 6), (20, 40)))
    # Evaluated every 50 steps, the run stops at the first evaluation exact on the training lengths
    # (step 200 of the 400-step schedule for seed 0; 150-250 for seeds 0-9): exact at 20-40 bits by then.
    group = SeedGroup(task, Variant.parse("abs"), ModelConfig(1, 2, 32),
                      TrainConfig(lr=3e-3, steps=400, warmup=20, eval_every=50, test_size=100), seeds=(0,))
    (result,) = group.run()
    assert result.accuracy == (1.0, 1.0)


def _tiny_parity_preset(monkeypatch):
    """A preset that trains parity on 1-3 bits for 150 steps (a model exact on some inputs: 117-164 of
    the 512 calibration inputs for seeds 0-4, keeping the same lines as after 300 steps)."""
    small = dataclasses.replace(registry.get("duan_parity_scratchpad"), train_range=(1, 3), bins=((1, 3), (4, 6)))
    tiny = protocol.Preset("tiny", "a test", lambda t, v: protocol.Plan(
        small, ModelConfig(1, 2, 32), TrainConfig(lr=3e-3, steps=150, warmup=20, eval_every=150, test_size=50)),
        seeds=1, count_threshold=0.0)
    monkeypatch.setitem(protocol.PRESETS, "tiny", tiny)
    return small, tiny


@pytest.fixture(scope="module")
def tiny_abc_runs(tmp_path_factory):
    """The tiny preset's abc2 validation of parity, trained once for the tests below: its first
    stage (the sinusoidal seed, then calibrated) and the abc2 seed, in a store that each test
    copies before it uses it. Returns the store's folder and the validation."""
    with pytest.MonkeyPatch.context() as patch:
        _, tiny = _tiny_parity_preset(patch)
        root = tmp_path_factory.mktemp("tiny-abc-runs")
        store = Store(root)
        result = validate("duan_parity_scratchpad", tiny, "abc2", store=store)
        store.close()
    return root, result


def _copy_of(runs, to) -> Store:
    root, _ = runs
    return Store(shutil.copytree(root, to))


def test_abc_calibrates_each_seed_from_the_sinusoidal_run_of_that_seed(tiny_abc_runs, tmp_path, monkeypatch):
    small, tiny = _tiny_parity_preset(monkeypatch)
    store = _copy_of(tiny_abc_runs, tmp_path / "runs")
    _, result = tiny_abc_runs  # validate trained both stages into the store (the fixture)
    (first,) = [r for r in store.runs() if r.spec.variant == "sinusoidal"]
    (second,) = result.runs
    from validation.models.build import Trained
    from validation.models.calibration import CALIBRATION_EXAMPLES, calibration_examples

    trained = Trained.from_weights(small, Variant.parse("sinusoidal"), first.spec.model, store.weights(first))
    own, cross, used = calibrate(trained.model, trained.encoding,
                                 calibration_examples(small, CALIBRATION_EXAMPLES, 0), kappa_cross=2.0)
    assert used > 0
    weights = store.weights(second)
    assert torch.equal(weights["cross_bias"], cross) and torch.equal(weights["self_bias"], own)
    assert validate("duan_parity_scratchpad", tiny, "abc2", store=store).runs == result.runs  # stored, not retrained


def test_duan_experiment_reports_the_lines_abc_kept(tiny_abc_runs, tmp_path, monkeypatch):
    from validation.experiments import arithmetic
    from validation.reports import arithmetic as arithmetic_report

    _tiny_parity_preset(monkeypatch)
    chosen = arithmetic.EXPERIMENTS["duan"]
    runs = (arithmetic.Run("duan_parity_scratchpad", "sinusoidal", arithmetic.FAILS),
            arithmetic.Run("duan_parity_scratchpad", "abc2", arithmetic.GENERALIZES))
    monkeypatch.setitem(arithmetic.EXPERIMENTS, "duan", dataclasses.replace(chosen, all_runs=runs, cpu_runs=None))
    # the experiment's two runs are the fixture's, already stored: it finds them, probes and reports
    store = _copy_of(tiny_abc_runs, tmp_path / "runs")
    outcome = arithmetic.run("duan", preset="tiny", store=store, out=tmp_path / "out", probe_count=5)
    assert outcome.results[1].runs == tiny_abc_runs[1].runs  # found in the store, not trained again
    (kept,) = outcome.kept
    assert (kept.task, kept.variant, kept.seed, len(kept.cross_lines)) == ("duan_parity_scratchpad", "abc2", 0, 2)
    assert "## Calibrated attention biases" in outcome.report.read_text()
    table = arithmetic_report.rows(outcome.results)
    claims = arithmetic_report.claims(outcome.experiment, outcome.preset, table, outcome.cascades)
    (abc,) = [c.row for c in claims if c.run.variant == "abc2"]
    assert (abc.model, abc.counted, abc.runs, abc.predicted) == ("1l2h32d", 1, 1, "undetermined")
    assert arithmetic_report.unpredicted(outcome.results) == ["sinusoidal", "abc2"]
