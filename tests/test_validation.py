"""The validation harness: model, data, training, store, protocol and report."""

from __future__ import annotations

import dataclasses
import io
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import torch

from tasks import registry
from validation.runs import protocol
from validation.reports import generalization as report
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.runs.spec import RunSpec
from validation.data.encoding import IGNORE, Encoding
from validation.data.streams import held_out_sets
from validation.models.gpt import GPT, positional_penalty
from validation.runs.store import Store, StoredRun
from validation.runs.sweep import train_specs, validate
from validation.training.group import SeedGroup

TINY = ModelConfig(1, 1, 16)
QUICK = TrainConfig(steps=6, batch_size=8, eval_every=3, test_size=16)


def _plan(task="bin_majority", model=TINY, train=QUICK):
    return protocol.Plan(registry.get(task), model, train)


def _tiny_preset(train=QUICK, seeds=2):
    return protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(task, TINY, train),
                           seeds=seeds, count_threshold=0.0)


# ---------------------------------------------------------------- configuration


def test_configs_parse_and_refuse_bad_values():
    assert ModelConfig.parse("12l12h768d") == ModelConfig(12, 12, 768)
    assert Variant.parse("ape_reg") == Variant("ape_reg1e-4", "ape", 1e-4)
    for bad in ("2l3h64d", "l2h", "0l1h16d"):
        with pytest.raises(ValidationError):
            ModelConfig.parse(bad)
    for bad in ("rope", "ape_reg-1", "ape_regx"):
        with pytest.raises(ValidationError):
            Variant.parse(bad)
    with pytest.raises(ValidationError):
        TrainConfig(lr=0)


# ---------------------------------------------------------------- model


def test_model_is_causal_and_nope_ignores_positions():
    torch.manual_seed(0)
    for positions in ("ape", "nope"):
        model = GPT(ModelConfig(2, 2, 16), vocab_size=7, n_positions=32, variant=positions)
        ids = torch.randint(0, 7, (3, 10))
        changed = ids.clone()
        changed[:, 6:] = (changed[:, 6:] + 1) % 7
        at = torch.arange(10)[None]
        assert torch.allclose(model(ids, at)[:, :6], model(changed, at)[:, :6], atol=1e-6)
        shifted = model(ids, at + 5)
        same = torch.allclose(model(ids, at), shifted, atol=1e-6)
        assert same == (positions == "nope")


def test_positional_penalty_matches_its_definition():
    torch.manual_seed(1)
    model = GPT(ModelConfig(2, 2, 8), vocab_size=5, n_positions=6, variant="ape")
    params = dict(model.named_parameters())
    table = params["wpe.weight"].detach()
    expected = 0.0
    for block in model.blocks:
        weight = block.attn.c_attn.weight.detach()
        for head in range(2):
            rows = slice(head * 4, head * 4 + 4)
            q, k = table @ weight[:8][rows].t(), table @ weight[8:16][rows].t()
            m = q @ k.t()
            expected += sum(float(m[a, b]) ** 2 for b in range(6) for a in range(b, 6)) / 6
    assert float(positional_penalty(params, 2).detach()) == pytest.approx(expected, rel=1e-5)
    nope = GPT(ModelConfig(1, 1, 8), vocab_size=5, n_positions=6, variant="nope")
    assert float(positional_penalty(dict(nope.named_parameters()), 1)) == 0.0


# ---------------------------------------------------------------- data


@pytest.mark.parametrize("name", registry.names("algorithmic")[:8])
def test_training_examples_fit_the_published_positional_table(name):
    task = registry.get(name)
    encoding = Encoding.of(task)
    rng = np.random.default_rng(0)
    examples = [task.sample_train(rng) for _ in range(300)]
    examples += [e for bin_ in held_out_sets(task, 20) for e in bin_]
    batch = encoding.collate(examples)  # raises if an example does not fit
    assert int(batch.positions.max()) < encoding.n_positions
    for b, example in enumerate(examples[:50]):
        checked = (batch.targets[b] != IGNORE).nonzero().flatten().tolist()
        assert checked == list(example.checked)
        assert [encoding.vocabulary[int(batch.targets[b, k])] for k in checked] == list(example.targets)
        assert int(batch.positions[b, 0]) == example.offset


@pytest.mark.parametrize("name", registry.names("algorithmic")[:8])
def test_rescaled_tasks_keep_the_published_table_and_offset_rule(name):
    task = registry.get(name)
    same = protocol.rescaled(task, task.train_range[1])
    assert (same.train_range, same.bins, same.n_positions) == (task.train_range, task.bins, task.n_positions)
    rng = np.random.default_rng(1)
    example = task.sample(min(task.bins[-1][1], task.max_input_length()) // 3, rng)
    published = {task.train_offset(example, np.random.default_rng(k)) for k in range(400)}
    assert {same.train_offset(example, np.random.default_rng(k)) for k in range(400)} == published

    small = protocol.rescaled(task, 12)
    assert small.bins == ((task.bins[0][0], 12), (13, 24), (25, 36)) and small.train_range[1] == 12
    encoding = Encoding.of(small)
    examples = [small.sample_train(rng) for _ in range(300)] + [e for b in held_out_sets(small, 30) for e in b]
    assert max(len(e.tokens) + e.offset for e in examples) <= encoding.n_positions < task.n_positions
    assert max(e.length for e in examples[:300]) <= 12


def test_rescaling_refuses_ranges_it_cannot_keep():
    with pytest.raises(ValidationError, match="must end in"):
        protocol.rescaled(registry.get("sort"), 60)
    with pytest.raises(ValidationError, match="three length bins"):
        protocol.rescaled(registry.get("tomita_3"), 20)


def test_next_set_tasks_get_flags():
    task = registry.get("d_2")
    encoding = Encoding.of(task)
    example = task.example(("a", "b"))
    batch = encoding.collate([example])
    assert encoding.flags == ("a", "b", "<eos>")
    for k, target in zip(example.checked, example.targets):
        on = {encoding.flags[f] for f in range(3) if batch.targets[0, k, f] == 1}
        assert on == set(target)


# ---------------------------------------------------------------- training


def test_tiny_model_learns_binary_majority_in_seconds():
    train = TrainConfig(steps=400, batch_size=64, eval_every=100, test_size=200)
    (result,) = SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), TINY, train, seeds=(0,)).run()
    assert result.accuracy[0] == 1.0 and result.stopped_early
    assert min(result.accuracy[1:]) >= 0.95


def test_a_run_told_not_to_stop_early_trains_its_whole_schedule():
    train = TrainConfig(steps=400, batch_size=64, eval_every=100, test_size=200, stop_when_exact=False)
    (result,) = SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), TINY, train, seeds=(0,)).run()
    assert result.steps == 400 and not result.stopped_early
    assert [e.step for e in result.history] == [100, 200, 300, 400]
    assert any(e.accuracy[0] == 1.0 for e in result.history[:-1])  # exact before the end, and went on


def test_a_seed_stops_once_its_training_bin_is_exact_whatever_the_first_bin_says():
    task = dataclasses.replace(registry.get("bin_majority"), bins=((51, 100), (0, 50), (101, 150)))
    assert task.training_bin == 1

    def run_with(accuracy):
        group = SeedGroup(task, Variant.parse("ape"), TINY, QUICK, seeds=(0,))
        group.evaluate = lambda: [accuracy]
        (result,) = group.run()
        return result

    stopped = run_with((0.5, 1.0, 0.0))
    assert stopped.stopped_early and stopped.steps == QUICK.eval_every
    went_on = run_with((1.0, 0.5, 1.0))
    assert not went_on.stopped_early and went_on.steps == QUICK.steps


def test_training_is_deterministic_and_independent_of_the_other_seeds():
    task, ape = registry.get("parity"), Variant.parse("ape_reg1e-3")
    first = SeedGroup(task, ape, TINY, QUICK, seeds=(0, 1)).run()
    again = SeedGroup(task, ape, TINY, QUICK, seeds=(0, 1)).run()
    alone = SeedGroup(task, ape, TINY, QUICK, seeds=(1,)).run()
    for a, b in zip(first, again):
        assert a.accuracy == b.accuracy
        assert all(torch.equal(a.weights[n], b.weights[n]) for n in a.weights)
    assert all(torch.allclose(first[1].weights[n], alone[0].weights[n], atol=1e-5) for n in alone[0].weights)


def test_per_seed_clipping_matches_one_model_alone():
    task = registry.get("majority")
    config = dataclasses.replace(QUICK, grad_clip=1e-3)
    group = SeedGroup(task, Variant.parse("ape"), TINY, config, seeds=(3, 4))
    single = SeedGroup(task, Variant.parse("ape"), TINY, config, seeds=(4,))
    group.train_step(), single.train_step()
    for name, p in single.params.items():
        assert torch.allclose(group.params[name][1], p[0], atol=1e-6), name


def test_dropout_is_part_of_the_label_and_of_no_key_without_it():
    assert ModelConfig.parse("2l4h64d-enc-drop0.1") == ModelConfig(2, 4, 64, encoder=True, dropout=0.1)
    assert ModelConfig(2, 4, 64, encoder=True, dropout=0.1).label == "2l4h64d-enc-drop0.1"
    assert ModelConfig.parse("2l4h64d").dropout == 0.0
    with pytest.raises(ValidationError, match="dropout"):
        ModelConfig(1, 1, 16, dropout=1.0)
    plain = RunSpec("parity", "ape", TINY, QUICK, seed=0)
    assert "dropout" not in plain.to_json()["model"]  # runs stored before dropout existed keep their keys
    dropped = dataclasses.replace(plain, model=dataclasses.replace(TINY, dropout=0.1))
    assert dropped.to_json()["model"]["dropout"] == 0.1 and dropped.key != plain.key


@pytest.mark.parametrize("variant", ["ape", "rpe4"])
def test_dropout_acts_only_with_a_noise_key_and_the_key_decides_the_masks(variant):
    torch.manual_seed(0)
    model = GPT(ModelConfig(2, 2, 16, dropout=0.5), vocab_size=6, n_positions=8, variant=variant)
    ids, positions = torch.tensor([[4, 0, 1, 5, 2, 3]]), torch.arange(6)[None]
    evaluated = model(ids, positions)
    assert torch.equal(evaluated, model(ids, positions))
    noise = torch.tensor([7919, 3])  # a seed's key and a step
    dropped = model(ids, positions, noise)
    assert not torch.allclose(dropped, evaluated)
    assert torch.equal(dropped, model(ids, positions, noise))  # the same key and step: the same masks
    assert not torch.allclose(model(ids, positions, torch.tensor([7919, 4])), dropped)  # the next step: others
    plain = GPT(ModelConfig(2, 2, 16), vocab_size=6, n_positions=8, variant=variant)
    plain.load_state_dict(model.state_dict())  # dropout adds no parameters
    assert torch.allclose(plain(ids, positions, noise), evaluated, atol=1e-6)


def test_dropout_runs_are_reproducible_alone_and_after_a_resume():
    task, ape, dropped = registry.get("parity"), Variant.parse("ape"), dataclasses.replace(TINY, dropout=0.3)
    outside = torch.get_rng_state()
    group = SeedGroup(task, ape, dropped, QUICK, seeds=(0, 1))
    for _ in range(3):
        group.train_step()
    buffer = io.BytesIO()
    torch.save(group.state(), buffer)
    for _ in range(3):
        group.train_step()
    assert torch.equal(torch.get_rng_state(), outside)  # masks are keyed by seed and step, not drawn from torch

    resumed = SeedGroup(task, ape, dropped, QUICK, seeds=(0, 1))
    buffer.seek(0)
    resumed.restore(torch.load(buffer, weights_only=True))
    for _ in range(3):
        resumed.train_step()
    alone = SeedGroup(task, ape, dropped, QUICK, seeds=(1,))
    undropped = SeedGroup(task, ape, TINY, QUICK, seeds=(1,))
    for _ in range(6):
        alone.train_step(), undropped.train_step()
    for name, p in group.params.items():
        assert torch.equal(resumed.params[name], p), name
        assert torch.allclose(alone.params[name][0], p[1], atol=1e-6), name
    assert any(not torch.allclose(undropped.params[n][0], p[1], atol=1e-4) for n, p in group.params.items())


def test_unknown_device_is_refused():
    with pytest.raises(ValidationError):
        SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), TINY, QUICK, seeds=(0,), device="tpu")


# ---------------------------------------------------------------- store, resume, damage


class Killed(Exception):
    pass


def test_a_killed_sweep_resumes_without_repeating_or_losing_runs(tmp_path, monkeypatch):
    plan = _plan(train=dataclasses.replace(QUICK, steps=9))
    specs = [RunSpec("bin_majority", "ape", plan.model, plan.train, seed, "tiny") for seed in (0, 1)]
    reference = train_specs(plan, Variant.parse("ape"), specs, store=Store(tmp_path / "whole"))

    store = Store(tmp_path / "killed")
    real = Store.save_partial
    saves = []

    def kill_after_first_save(self, key, state):
        real(self, key, state)
        saves.append(state["step"])
        raise Killed

    monkeypatch.setattr(Store, "save_partial", kill_after_first_save)
    with pytest.raises(Killed):
        train_specs(plan, Variant.parse("ape"), specs, store=store)
    monkeypatch.setattr(Store, "save_partial", real)
    assert saves == [3]
    # The store names the group in progress and what it had learned, as the whole run had at step 3.
    (running,) = Store(tmp_path / "killed").in_progress()
    assert (running.spec.task, running.spec.variant, running.spec.model) == ("bin_majority", "ape", plan.model)
    assert (running.seeds, running.step, running.total_steps) == ((0, 1), 3, 9)
    assert [h[-1] for h in running.history] == [run.history[0] for run in reference]
    assert "## Runs in progress" in report.write(Store(tmp_path / "killed"), tmp_path / "report").read_text()
    listed = report.running(Store(tmp_path / "killed").in_progress())
    assert [(r.spec.task, r.spec.variant, r.spec.preset, r.spec.model, r.seed, r.step, r.total_steps, r.bins, r.last)
            for r in listed] == [("bin_majority", "ape", "tiny", plan.model, run.spec.seed, 3, 9,
                                  registry.get("bin_majority").bins, run.history[0][1]) for run in reference]
    resumed = train_specs(plan, Variant.parse("ape"), specs, store=Store(tmp_path / "killed"))
    assert Store(tmp_path / "killed").in_progress() == []
    for a, b in zip(reference, resumed):
        assert a.accuracy == b.accuracy and a.steps == b.steps and a.history == b.history
    # Everything is stored now: nothing trains again.
    monkeypatch.setattr(SeedGroup, "__init__", lambda *a, **k: pytest.fail("retrained a finished run"))
    again = train_specs(plan, Variant.parse("ape"), specs, store=Store(tmp_path / "killed"))
    assert [r.accuracy for r in again] == [r.accuracy for r in resumed]


def test_damaged_rows_and_checkpoints_are_reported_not_used(tmp_path):
    store = Store(tmp_path)
    result = validate("bin_majority", _tiny_preset(), "ape", store=store)
    first, second = result.runs
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        db.execute("UPDATE runs SET accuracy = '[1.0, 1.0, 1.0]' WHERE key = ?", (first.spec.key,))
    (tmp_path / second.checkpoint).write_bytes(b"not a checkpoint")
    fresh = Store(tmp_path)
    assert fresh.runs() == []
    assert {p.key for p in fresh.problems} == {first.spec.key, second.spec.key}
    assert any("digest" in p.what for p in fresh.problems)


def test_damaged_partial_checkpoint_restarts_its_seeds(tmp_path):
    store = Store(tmp_path)
    store.save_partial("group", {"step": 3, "seeds": [0]})
    (tmp_path / "partial" / "group.pt").write_bytes(b"garbage")
    assert store.load_partial("group") is None
    assert "damaged" in store.problems[0].what
    assert store.in_progress() == []


def test_a_group_in_progress_saved_without_its_configuration_is_listed_by_key(tmp_path):
    store = Store(tmp_path)
    store.save_partial("older", {"step": 3, "seeds": [0], "history": [[(3, [1.0, 0.5])]]})
    store.save_partial("broken", {"step": 3})
    (older,) = store.in_progress()
    assert (older.group_key, older.spec, older.history) == ("older", None, (((3, (1.0, 0.5)),),))
    assert [p.key for p in store.problems] == ["broken"]
    assert report.running([older]) == [report.Running("older", None, 0, 3, None, None, (1.0, 0.5))]
    text = report.markdown([], store.problems, in_progress=[older])
    assert "## Runs in progress" in text and "## Damaged runs (not used)" in text


def test_groups_in_progress_are_listed_from_their_summaries_without_loading_checkpoints(tmp_path, monkeypatch):
    state = {"step": 3, "seeds": [0], "history": [[(3, [1.0, 0.5])]], "params": {"w": torch.zeros(2)}}
    store = Store(tmp_path)
    store.save_partial("group", state)
    store.save_partial("older", state)
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        db.execute("UPDATE partial SET step = 6 WHERE group_key = 'older'")  # re-saved by a version without summaries
        db.execute("UPDATE partial_summary SET summary = '{not json' WHERE group_key = 'group'")
    store = Store(tmp_path)
    assert [g.group_key for g in store.in_progress()] == ["older"]  # read from its checkpoint
    assert [p.key for p in store.problems] == ["group"]  # a damaged summary is reported

    store.save_partial("group", state)
    store.drop_partial("older")
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("loaded a checkpoint to list it"))
    (group,) = Store(tmp_path).in_progress()
    assert (group.seeds, group.step, group.history) == ((0,), 3, (((3, (1.0, 0.5)),),))


def test_a_store_keeps_the_partial_table_older_versions_write(tmp_path):
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:  # as a version without summaries made it
        db.execute("CREATE TABLE partial (group_key TEXT PRIMARY KEY, path TEXT NOT NULL, sha256 TEXT NOT NULL, "
                   "step INTEGER NOT NULL)")
    store = Store(tmp_path)
    store.save_partial("group", {"step": 1, "seeds": [0], "history": [[]]})
    assert [(g.group_key, g.step) for g in store.in_progress()] == [("group", 1)]
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:  # which such a version can still write to
        db.execute("INSERT OR REPLACE INTO partial VALUES ('group', 'partial/group.pt', 'x', 2)")
    assert [c[1] for c in sqlite3.connect(tmp_path / "runs.sqlite").execute("PRAGMA table_info(partial)")] == [
        "group_key", "path", "sha256", "step"]


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "runs.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ValidationError, match="not a readable run store"):
        Store(tmp_path)


def test_counted_seeds_rule_tries_more_seeds():
    preset = protocol.Preset("strict", "tests", lambda task, variant: protocol.Plan(task, TINY, QUICK),
                             seeds=2, count_threshold=1.01, max_attempts=2)
    spec = RunSpec("bin_majority", "ape", TINY, QUICK, 0)
    assert not preset.counts(spec, (1.0, 1.0, 1.0))
    assert preset.counts(dataclasses.replace(spec, model=ModelConfig(12, 12, 768)), (0.5, 0.0, 0.0))


def test_a_seed_counts_by_its_training_bin_not_the_first():
    """Xu et al.'s D_3 run tests 1-2 digits in a bin of its own before the trained 3: a seed exact on
    3 digits counts (it learned its training data) whatever it does on 1-2, and one exact on 1-2 but
    not on 3 does not."""
    cpu = protocol.PRESETS["cpu"]
    task = protocol.trained_on(registry.get("xu_addition"), 3)
    spec = RunSpec(task.name, "ape", TINY, QUICK, 0, "cpu", task.train_range, task.bins)
    assert spec.training_bin == 1
    assert cpu.counts(spec, (0.1, 1.0, 0.0, 0.0))
    assert not cpu.counts(spec, (1.0, 0.5, 0.0, 0.0))
    old = dataclasses.replace(spec, bins=((1, 3), (4, 9), (10, 20)))  # as runs were stored before the split
    assert old.training_bin == 0 and not cpu.counts(old, (0.1, 1.0, 0.0))
    assert RunSpec(task.name, "ape", TINY, QUICK, 0).training_bin == registry.get("xu_addition").training_bin == 1


def test_validate_tries_seeds_until_enough_count(tmp_path):
    preset = protocol.Preset("strict", "tests", lambda task, variant: protocol.Plan(task, TINY, QUICK),
                             seeds=2, count_threshold=1.01, max_attempts=2)
    result = validate("bin_majority", preset, "ape", store=Store(tmp_path))
    assert [r.spec.seed for r in result.runs] == [0, 1, 2, 3] and result.counted == ()


def _fine_tuning_preset(fine_tune: TrainConfig, first: str = "xu_addition"):
    """Trains ``first`` from a fresh start and every other task with ``fine_tune``."""
    return protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        task, TINY, QUICK if task.name == first else fine_tune), seeds=2, count_threshold=0.0)


def test_a_fine_tuned_run_starts_from_the_same_seed_of_the_named_task(tmp_path):
    store = Store(tmp_path)
    still = dataclasses.replace(QUICK, lr=1e-9, start_from="xu_addition")  # steps that barely move the weights
    tuned = validate("xu_mod100_addition", _fine_tuning_preset(still), "ape", store=store)
    assert {r.spec.task for r in store.runs()} == {"xu_addition", "xu_mod100_addition"}
    first = validate("xu_addition", _fine_tuning_preset(still), "ape", store=store)  # found, not retrained
    assert len(store.runs()) == 4
    for run, source in zip(tuned.runs, first.runs):
        assert run.spec.seed == source.spec.seed and run.spec.train.start_from == "xu_addition"
        after, before = store.weights(run), store.weights(source)
        assert all(torch.allclose(after[name], before[name], atol=1e-5) for name in before)
    other = store.weights(first.runs[1])
    assert not torch.allclose(store.weights(tuned.runs[0])["wte.weight"], other["wte.weight"], atol=1e-3)


def test_progress_names_the_first_stage_while_it_trains(tmp_path):
    seen = []
    validate("xu_mod100_addition", _fine_tuning_preset(dataclasses.replace(QUICK, start_from="xu_addition")), "ape",
             store=Store(tmp_path), progress=lambda step, total, status: seen.append(status))
    first = [s for s in seen if s.startswith("first stage xu_addition ape: ")]
    assert first and seen[:len(first)] == first  # the first stage trains first, and says so
    assert seen[len(first):] and not any(s.startswith("first stage") for s in seen[len(first):])


def test_progress_moves_between_evaluations_with_the_loss(tmp_path, monkeypatch):
    """With the throttle at 0 s, every training step reports, with the loss, not only each
    evaluation (every 3 steps here)."""
    from validation.training import group as train

    monkeypatch.setattr(train, "PROGRESS_EVERY", 0.0)
    seen = []
    preset = protocol.Preset("tiny", "progress", lambda task, variant: protocol.Plan(task, TINY, QUICK),
                             seeds=1, count_threshold=0.0)
    validate("bin_majority", preset, "ape", store=Store(tmp_path),
             progress=lambda step, total, status: seen.append((step, status)))
    steps = [step for step, _ in seen]
    assert set(range(1, QUICK.steps + 1)) <= set(steps) and any(s % QUICK.eval_every for s in steps)
    assert all(status.startswith("loss ") for step, status in seen if step % QUICK.eval_every)


def test_fine_tuning_refuses_other_vocabularies_and_chains_and_changes_nothing(tmp_path):
    store = Store(tmp_path)
    with pytest.raises(ValidationError, match="vocabularies differ"):
        validate("bin_majority", _fine_tuning_preset(dataclasses.replace(QUICK, start_from="xu_addition")), "ape",
                 store=store)
    chained = _fine_tuning_preset(dataclasses.replace(QUICK, start_from="xu_mod100_addition"), first="none")
    with pytest.raises(ValidationError, match="cannot itself start from"):
        validate("xu_mod101_addition", chained, "ape", store=store)
    assert store.runs() == []


def test_fresh_runs_keep_their_store_keys_and_fine_tuned_ones_get_their_own():
    fresh = RunSpec("xu_addition", "ape", TINY, QUICK, 0)
    tuned = dataclasses.replace(fresh, train=dataclasses.replace(QUICK, start_from="bin_majority"))
    assert "start_from" not in fresh.to_json()["train"] and tuned.to_json()["train"]["start_from"] == "bin_majority"
    assert fresh.key != tuned.key
    whole = dataclasses.replace(fresh, train=dataclasses.replace(QUICK, stop_when_exact=False))
    assert "stop_when_exact" not in fresh.to_json()["train"] and whole.to_json()["train"]["stop_when_exact"] is False
    assert whole.key not in (fresh.key, tuned.key)


def test_xu_modular_tasks_fine_tune_from_the_plain_operation_under_the_cpu_preset():
    cpu, paper = protocol.PRESETS["cpu"], protocol.PRESETS["paper"]
    ape = Variant.parse("ape")
    assert cpu.plan(registry.get("xu_mod101_addition"), ape).train.start_from == "xu_addition"
    assert cpu.plan(registry.get("xu_mod50_multiplication"), ape).train.start_from == "xu_multiplication"
    assert cpu.plan(registry.get("xu_addition"), ape).train.start_from is None
    assert paper.plan(registry.get("xu_mod101_addition"), ape).train.start_from is None


# ---------------------------------------------------------------- protocol


def test_the_cpu_preset_counts_five_seeds_for_the_algorithmic_tasks():
    cpu, paper = protocol.PRESETS["cpu"], protocol.PRESETS["paper"]
    assert [cpu.seeds_for(registry.get(n)) for n in ("sort", "parity", "addition")] == [5, 5, 5]
    assert cpu.seeds_for(registry.get("xu_addition")) == 2 and cpu.seeds_for(registry.get("tomita_1")) == 2
    assert paper.seeds_for(registry.get("sort")) == paper.seeds_for(registry.get("xu_addition")) == 5


def test_paper_preset_uses_the_published_configurations():
    paper = protocol.PRESETS["paper"]
    addition = paper.plan(registry.get("addition"), Variant.parse("nope"))
    assert addition.model.label == "12l12h768d" and addition.train.steps == 60_000 and addition.train.warmup == 3_000
    sort = paper.plan(registry.get("sort"), Variant.parse("ape_reg"))
    assert (sort.model.label, sort.train.lr, sort.train.steps) == ("1l2h256d", 1e-4, 30_000)
    formal = paper.plan(registry.get("tomita_5"), Variant.parse("ape"))
    assert (formal.train.lr, formal.train.batch_size, formal.train.epochs, formal.train.weight_decay) == \
        (1e-5, 16, 150, 0.1)
    assert len(protocol.PAPER_GRID) == 54 and len(protocol.FORMAL_GRID) == 18
    with pytest.raises(ValidationError):
        paper.plan(registry.get("duan_addition"), Variant.parse("ape"))


@pytest.mark.parametrize("variant", ["ape", "nope"])
def test_cpu_preset_budgets_every_algorithmic_task(variant):
    cpu = protocol.PRESETS["cpu"]
    for name in registry.names("algorithmic")[:8]:
        budget = protocol.CPU_BUDGETS[name]
        plan = cpu.plan(registry.get(name), Variant.parse(variant))
        assert (plan.model.label, plan.train.lr, plan.train.steps) == (budget.model, budget.lr, budget.steps)
        assert plan.train.eval_every == budget.steps // 5
        longest = budget.longest_train or registry.get(name).train_range[1]
        assert plan.task.train_range[1] == longest and plan.task.bins[-1][1] == 3 * longest
        assert ("scaled" in plan.note) == (budget.longest_train is not None)


def test_formal_protocol_trains_epochs_over_a_fixed_set():
    train = TrainConfig(lr=1e-3, batch_size=4, epochs=2, train_size=10, eval_every=3, test_size=4)
    group = SeedGroup(registry.get("d_2"), Variant.parse("ape"), TINY, train, seeds=(0,))
    assert group.total_steps == 6
    assert len({e.tokens for e in group.feed.streams[0].fixed}) == 10
    (result,) = group.run()
    assert len(result.accuracy) == len(registry.get("d_2").bins)


# ---------------------------------------------------------------- report


def test_the_outcome_rule_reads_the_papers_labels_from_its_numbers():
    for name in registry.names("algorithmic")[:8]:
        task = registry.get(name)
        for anchor in task.anchors:
            label = task.labels.nope if anchor.variant == "nope" else task.labels.ape
            assert report.outcome(anchor.bins) is (report.Outcome.KEPT if label else report.Outcome.COLLAPSED), \
                (name, anchor.variant)


def test_report_tables_plots_and_agreement(tmp_path):
    store = Store(tmp_path / "runs")
    spec = RunSpec("bin_majority", "ape", TINY, dataclasses.replace(QUICK, test_size=2000), 0, "tiny")
    model = GPT(TINY, vocab_size=6, n_positions=154, variant="ape")
    weights = {n: p.detach() for n, p in model.named_parameters()}
    store.record(spec, (1.0, 0.99, 0.97), 6, 1.0, True, [(6, (1.0, 0.99, 0.97))], weights)
    store.record(dataclasses.replace(spec, seed=1), (1.0, 0.95, 0.93), 6, 1.0, True, [], weights)
    store.record(dataclasses.replace(spec, task="repeat_copy"), (0.95, 0.9, 0.85), 6, 1.0, False, [], weights)
    table = report.rows(store)
    majority, copy = table
    assert majority.mean == pytest.approx((1.0, 0.97, 0.95)) and majority.spread[1] == pytest.approx(0.02)
    # Two seeds that differ by 0.04: the t interval (1 degree of freedom) of bin 3 reaches below 0.8.
    assert majority.intervals[2].low < 0.8 and majority.observed is report.Outcome.INCONCLUSIVE
    assert majority.agreement == "inconclusive: an interval straddles a threshold"
    assert majority.seeds == ((1.0, 0.99, 0.97), (1.0, 0.95, 0.93)) and majority.examples == 2000
    assert copy.predicted == "does not generalize" and copy.observed is report.Outcome.KEPT
    assert copy.agreement == "no" and copy.intervals[2].text() == "0.850 [0.834, 0.865]"
    for seed, accuracy in zip(range(2, 5), [(1.0, 0.97, 0.95), (1.0, 0.96, 0.96), (1.0, 0.98, 0.94)]):
        store.record(dataclasses.replace(spec, seed=seed), accuracy, 6, 1.0, True, [], weights)
    majority, copy = table = report.rows(store)
    assert majority.counted == 5 and majority.intervals[2].low > 0.9
    assert majority.predicted == "generalizes" and majority.agreement == "yes"
    assert (majority.task, majority.variant, majority.preset, majority.model, majority.counted, majority.runs) == \
        ("bin_majority", "ape", "tiny", "1l1h16d", 5, 5)
    assert report.agreement(table) == report.Agreement(rows=1, of_rows=2, tasks=1, of_tasks=2)
    path = report.write(store, tmp_path / "out")
    text = path.read_text()
    assert text.startswith("# Length generalization") and report.RULE in text
    assert "1.000 / 0.990 / 0.970; 1.000 / 0.950 / 0.930;" in text and "0.950 [0.9" in text
    assert (tmp_path / "out" / "bin_majority.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_outcomes_on_synthetic_stores_where_the_answer_is_known(tmp_path):
    """Rows whose seeds were drawn around known accuracies: clear rows get their outcome, a row
    whose longest bin sits on the collapse threshold and one whose training bin sits on the
    learning threshold are inconclusive, however many seeds."""
    rng = np.random.default_rng(3)
    store = Store(tmp_path / "runs")
    weights = {n: p.detach() for n, p in GPT(TINY, vocab_size=6, n_positions=154, variant="ape").named_parameters()}
    truths = {16: ((1.0, 0.97, 0.93), report.Outcome.KEPT), 17: ((1.0, 0.3, 0.05), report.Outcome.COLLAPSED),
              18: ((1.0, 0.75, 0.7), report.Outcome.INCONCLUSIVE), 19: ((0.9, 0.9, 0.9), report.Outcome.INCONCLUSIVE),
              20: ((1.0, 0.76, 0.76), report.Outcome.BETWEEN), 21: ((0.4, 0.3, 0.2), report.Outcome.NOT_LEARNED)}
    examples = 400
    for width, (truth, _) in truths.items():
        spec = RunSpec("bin_majority", "ape", ModelConfig(1, 1, width), dataclasses.replace(QUICK, test_size=examples),
                       0, "tiny")
        for seed in range(5):
            drawn = tuple(float(v) for v in rng.binomial(examples, truth) / examples)
            if width == 18:  # on the threshold exactly, up to a small spread
                drawn = (1.0, drawn[1], 0.7 + (seed - 2) * 0.005)
            if width == 19:
                drawn = (0.9 + (seed - 2) * 0.005, *drawn[1:])
            store.record(dataclasses.replace(spec, seed=seed), drawn, 6, 1.0, True, [], weights)
    for row in report.rows(store):
        width = int(row.model[len("1l1h"):-1])
        assert row.observed is truths[width][1], (width, row.intervals)
        if row.observed is report.Outcome.INCONCLUSIVE:
            assert row.agreement.startswith("inconclusive")


def test_report_reads_xu_runs_on_their_training_bin(tmp_path):
    """Bins 1-2 / 3 / 4-9 / 10-20 of a D_3 run: the outcome reads 3 digits as the training bin, and
    a run kept above but not below is not kept."""
    store = Store(tmp_path / "runs")
    task = protocol.trained_on(registry.get("xu_addition"), 3)
    spec = RunSpec(task.name, "ape", TINY, dataclasses.replace(QUICK, test_size=2000), 0, "cpu", task.train_range,
                   task.bins)
    weights = {n: p.detach() for n, p in GPT(TINY, vocab_size=6, n_positions=8, variant="ape").named_parameters()}
    Outcome = report.Outcome
    for seed, (accuracy, expected) in enumerate([((0.2, 1.0, 0.0, 0.0), Outcome.COLLAPSED),
                                                 ((1.0, 1.0, 0.9, 0.85), Outcome.KEPT),
                                                 ((0.5, 1.0, 0.9, 0.9), Outcome.BETWEEN),
                                                 ((1.0, 0.5, 1.0, 1.0), Outcome.NOT_LEARNED)]):
        store.record(dataclasses.replace(spec, model=ModelConfig(1, 1, 16 + seed)), accuracy, 6, 1.0, False, [],
                     weights)
        (row,) = [r for r in report.rows(store) if r.model == f"1l1h{16 + seed}d"]
        assert (row.trained, row.observed, row.counted) == (1, expected, int(accuracy[1] >= protocol.LEARNED))
    matplotlib = pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    backend = matplotlib.get_backend()  # drawing leaves matplotlib's backend alone
    drawn = report.plot(report.rows(store), task.name)
    assert isinstance(drawn, Figure) and matplotlib.get_backend() == backend
    assert report.save(drawn, tmp_path / "xu.png").is_file()


# ---------------------------------------------------------------- command line


def test_crasp_validate_and_report_on_the_command_line(tmp_path):
    import io

    from crasp.cli import main

    out, err = io.StringIO(), io.StringIO()
    store, folder = str(tmp_path / "runs"), str(tmp_path / "report")
    assert main(["validate", "bin_majority", "--seeds", "1", "--store", store], out, err) == 0, err.getvalue()
    assert "bin_majority ape 1l1h16d seed 0: 0-50: 1.000, 51-100: " in out.getvalue()
    assert "plan: bin_majority ape: 1l1h16d, 1,000 steps" in err.getvalue() and "until 1 count, at most 2 tried" in err.getvalue()
    out = io.StringIO()
    assert main(["report", "--store", store, "--out", folder], out, err) == 0
    (run,) = Store(store).runs()
    took = report.duration_text(run.wall_time)  # one run: its own wall time
    assert f"| bin_majority | ape | cpu | 1l1h16d | 1/1 | {took} | 400 | generalizes (verified) |" in out.getvalue()
    assert (tmp_path / "report" / "bin_majority.png").is_file()
    err = io.StringIO()
    assert main(["report", "--store", str(tmp_path / "nowhere")], io.StringIO(), err) == 1
    assert "no run store here" in err.getvalue()
    err = io.StringIO()
    assert main(["validate", "bin_majority", "--variant", "rope", "--store", store], io.StringIO(), err) == 1
    assert "variant 'rope'" in err.getvalue()


def test_a_resumed_groups_progress_bar_starts_at_its_step():
    from validation.cli import _Bar

    out = io.StringIO()
    bar = _Bar("xu_addition ape", out)
    bar(3600, 6000, "resumed seeds [0] at step 3600")  # no steps trained yet in this process: no rate
    shown = out.getvalue().split("\r")[-1]
    assert "3600/6000" in shown and "?step/s" in shown, shown
    bar(4200, 6000, "loss 0.1")
    assert "4200/6000" in out.getvalue().split("\r")[-1]
    bar.close()


# ---------------------------------------------------------------- --json, --set, --config, --device auto


def _cli(*argv) -> tuple[int, str, str]:
    from crasp.cli import main

    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def _document(out: str) -> dict:
    """The one JSON document ``out`` holds: stdout has nothing else."""
    import json

    document, end = json.JSONDecoder().raw_decode(out)
    assert out[end:].strip() == "", "stdout has more than the JSON document"
    return document


@pytest.fixture(scope="module")
def tiny_cli():
    """The ``tiny`` preset (a 6-step run that always counts) registered for the command line, and
    a store holding its bin_majority seed 0, validated once with ``--json``."""
    import shutil
    import tempfile

    protocol.PRESETS["tiny"] = _tiny_preset(seeds=1)
    folder = tempfile.mkdtemp(prefix="crasp-tiny-cli-")
    store = f"{folder}/runs"
    try:
        yield store, _cli("validate", "bin_majority", "--preset", "tiny", "--store", store, "--json")
    finally:
        del protocol.PRESETS["tiny"]
        shutil.rmtree(folder, ignore_errors=True)


def test_validate_json_is_one_document_of_every_run(tiny_cli):
    store, (status, out, err) = tiny_cli
    assert status == 0, err
    document = _document(out)
    assert set(document) == {"store", "device", "overrides", "runs", "failed", "stopped", "report"}
    assert document["store"] == store and document["overrides"] == {} and document["failed"] == []
    assert document["report"] is None
    assert document["device"] == ("cuda" if torch.cuda.is_available() else "cpu")  # --device auto, the default
    (run,) = document["runs"]
    assert set(run) == {"task", "variant", "preset", "model", "seed", "bins", "accuracy", "steps", "wall_time",
                        "stopped_early", "counted", "key", "checkpoint", "spec"}
    assert (run["task"], run["variant"], run["preset"], run["model"], run["seed"], run["counted"]) == \
        ("bin_majority", "ape", "tiny", "1l1h16d", 0, True)
    assert run["bins"] == [list(b) for b in registry.get("bin_majority").bins]
    assert len(run["accuracy"]) == 3 and all(isinstance(a, float) and 0 <= a <= 1 for a in run["accuracy"])
    assert isinstance(run["steps"], int) and isinstance(run["wall_time"], float)
    assert run["spec"]["train"]["steps"] == QUICK.steps and run["spec"]["seed"] == 0
    checkpoint = Path(run["checkpoint"])
    assert run["checkpoint"].startswith(store) and checkpoint.is_file() and run["key"] in checkpoint.name
    assert "bin_majority ape" in err  # progress went to stderr


def test_report_json_gives_the_rows_and_the_written_paths(tiny_cli, tmp_path):
    store, _ = tiny_cli
    status, out, err = _cli("report", "--store", store, "--out", str(tmp_path / "report"), "--json")
    assert status == 0, err
    document = _document(out)
    assert set(document) == {"store", "report", "plots", "rows", "agreement", "in_progress", "problems", "repair"}
    assert Path(document["report"]).is_file() and Path(document["plots"]["bin_majority"]).is_file()
    assert document["in_progress"] == [] and document["problems"] == [] and document["repair"] is None
    tally = document["agreement"]
    assert set(tally) == {"rows", "of_rows", "tasks", "of_tasks"} and (tally["of_rows"], tally["of_tasks"]) == (1, 1)
    (row,) = document["rows"]
    assert {"task", "variant", "preset", "model", "runs", "counted", "examples", "predicted", "basis", "bins",
            "mean", "spread", "intervals", "seeds", "observed", "published", "published_outcome", "agreement",
            "trained", "published_bins", "training_seconds", "baseline", "strength", "prediction",
            "prediction_source"} == set(row)
    assert (row["task"], row["preset"], row["model"], row["runs"], row["counted"], row["examples"]) == \
        ("bin_majority", "tiny", "1l1h16d", 1, 1, QUICK.test_size)
    assert row["predicted"] == "generalizes" and row["observed"] in [o.value for o in report.Outcome]
    assert (row["strength"], row["prediction"]) == ("verified", "generalizes (verified)")
    assert row["prediction_source"] == "recorded when trained (budget default)"
    assert len(row["baseline"]) == 3 and all(0.0 < b < 0.9 for b in row["baseline"])
    assert len(row["intervals"]) == 3 and set(row["intervals"][0]) == {"estimate", "low", "high", "method",
                                                                       "confidence"}
    assert all(i["low"] <= i["estimate"] <= i["high"] for i in row["intervals"])
    assert len(row["seeds"]) == 1 and len(row["published"]) == 3 and row["published_outcome"] == "kept"
    assert isinstance(row["agreement"], str)


def test_overrides_reach_the_run_are_stored_apart_and_found_again(monkeypatch, tmp_path):
    monkeypatch.setitem(protocol.PRESETS, "tiny", _tiny_preset(seeds=1))
    store = str(tmp_path / "runs")
    status, first, err = _cli("validate", "bin_majority", "--preset", "tiny", "--store", store, "--json")
    assert status == 0, err
    preset_key = _document(first)["runs"][0]["key"]
    status, out, err = _cli("validate", "bin_majority", "--preset", "tiny", "--store", store, "--json",
                            "--set", "lr=3e-4", "--set", "steps=4", "--set", "eval_every=2")
    assert status == 0, err
    document = _document(out)
    assert document["overrides"] == {"lr": 3e-4, "steps": 4, "eval_every": 2}
    (run,) = document["runs"]
    train = run["spec"]["train"]
    assert (train["lr"], train["steps"], train["eval_every"], train["batch_size"]) == (3e-4, 4, 2, QUICK.batch_size)
    assert run["steps"] <= 4 and run["key"] != preset_key
    stored = {r.spec.key: r.spec for r in Store(store).runs()}
    assert stored[run["key"]].train.lr == 3e-4 and preset_key in stored
    # A second call finds the overridden run (the settings in either order), and the preset's run, untrained.
    monkeypatch.setattr(SeedGroup, "__init__", lambda *a, **k: pytest.fail("retrained a stored run"))
    status, out, err = _cli("validate", "bin_majority", "--preset", "tiny", "--store", store, "--json",
                            "--set", "eval_every=2", "--set", "steps=4", "--set", "lr=0.0003")
    assert status == 0 and [r["key"] for r in _document(out)["runs"]] == [run["key"]], err
    status, out, _ = _cli("validate", "bin_majority", "--preset", "tiny", "--store", store, "--json")
    assert [r["key"] for r in _document(out)["runs"]] == [preset_key]
    # The report keeps them apart: a row each, told apart by the settings that differ.
    models = sorted(row.model for row in report.rows(Store(store)))
    assert models == ["1l1h16d [lr=0.0003, steps=4, eval_every=2]", "1l1h16d [lr=0.001, steps=6, eval_every=3]"]
    # Read as the preset plans its runs now, the report keeps the preset's row and counts the other out.
    out_dir = tmp_path / "planned"
    status, out, err = _cli("report", "--store", store, "--preset", "tiny", "--as-planned", "--out", str(out_dir),
                            "--json")
    assert status == 0, err
    assert [(row["model"], row["runs"]) for row in _document(out)["rows"]] == [("1l1h16d", 1)]
    assert "1 stored run of this preset trained with other settings" in (out_dir / "report.md").read_text()
    status, _, err = _cli("report", "--store", store, "--as-planned", "--out", str(out_dir))
    assert status != 0 and "name the preset" in err


def test_training_time_counts_a_group_once_and_overlapping_groups_once():
    spec = RunSpec("bin_majority", "ape", TINY, QUICK, 0, "tiny")

    def run(wall: float, recorded: str) -> StoredRun:
        return StoredRun(spec, (1.0, 1.0, 1.0), 6, wall, False, (), "", recorded)

    group = [run(100, "2026-01-01T10:01:40"), run(60, "2026-01-01T10:01:00"), run(100, "2026-01-01T10:01:42")]
    assert report.training_seconds(group) == 102  # one group: from 10:00:00 to its last seed at 10:01:42
    after = [run(50, "2026-01-01T10:03:00")]  # from 10:02:10, after the first group ended
    assert report.training_seconds(group + after) == 152
    beside = [run(120, "2026-01-01T10:02:30")]  # from 10:00:30, beside the first group: 48 s more
    assert report.training_seconds(group + beside) == 150
    assert report.training_seconds([run(7, "")]) == 7 and report.training_seconds([]) == 0
    assert report.duration_text(report.training_seconds(group + after)) == "3 min"


def test_a_toml_configuration_file_sets_the_training_and_the_model(monkeypatch, tmp_path):
    monkeypatch.setitem(protocol.PRESETS, "tiny", _tiny_preset(seeds=1))
    store = str(tmp_path / "runs")
    config = tmp_path / "train.toml"
    config.write_text('# a run of its own\nlr = 2e-3\nsteps = 3\nmodel = "1l2h16d"\ngrad_clip = "none"\n')
    status, out, err = _cli("validate", "bin_majority", "--preset", "tiny", "--store", store, "--json",
                            "--config", str(config), "--set", "steps=2", "--set", "eval_every=2")
    assert status == 0, err
    (run,) = _document(out)["runs"]
    assert run["model"] == "1l2h16d" and run["spec"]["model"]["n_head"] == 2
    train = run["spec"]["train"]
    assert (train["lr"], train["steps"], train["grad_clip"]) == (2e-3, 2, None)  # --set wins over the file


@pytest.mark.parametrize("argv,said", [
    (["--set", "seed=3"], ["'seed'", "allowed: lr, steps, batch_size", "model"]),
    (["--set", "steps=many"], ["--set steps=many", "steps takes a positive integer"]),
    (["--set", "lr=-1"], ["--set lr=-1", "lr takes a positive number"]),
    (["--set", "lr"], ["--set lr: expected KEY=VALUE", "keys: lr, steps"]),
    (["--set", "model=big"], ["--set model=big", "expected LAYERSlHEADShWIDTHd"]),
    (["--set", "model=1l1h16d-enc"], ["model=1l1h16d-enc: this task trains a decoder"]),
    (["--set", "stop_when_exact=maybe"], ["stop_when_exact takes true or false"]),
    (["--grid", "--set", "lr=1e-3"], ["--grid searches the model and lr itself"]),
    (["--device", "cuda:0"] if not torch.cuda.is_available() else ["--device", "tpu"], ["device"]),
])
def test_bad_settings_fail_cleanly_and_change_nothing(tmp_path, argv, said):
    store = tmp_path / "runs"
    status, out, err = _cli("validate", "bin_majority", "--store", str(store), *argv)
    assert status == 1 and out == "" and err.startswith("crasp: error: "), err
    assert all(text in err for text in said), err
    assert not store.exists()


@pytest.mark.parametrize("text,said", [
    ("lr = 3e-4\nsteps = [\n", "not valid TOML"),
    ("learning_rate = 3e-4\n", "no setting 'learning_rate' (allowed: lr, steps"),
    ("steps = 2000.5\n", "steps = 2000.5: steps takes a positive integer"),
    ("[train]\nlr = 3e-4\n", "[train]: the settings are top-level KEY = VALUE lines"),
])
def test_a_bad_configuration_file_is_named(tmp_path, text, said):
    config, store = tmp_path / "bad.toml", tmp_path / "runs"
    config.write_text(text)
    status, out, err = _cli("validate", "bin_majority", "--store", str(store), "--config", str(config))
    assert status == 1 and out == "" and f"crasp: error: {config}: " in err and said in err, err
    assert not store.exists()
    status, _, err = _cli("validate", "bin_majority", "--store", str(store), "--config", str(tmp_path / "none.toml"))
    assert status == 1 and "none.toml: no such configuration file" in err and not store.exists()


def test_device_auto_is_the_default_and_resolves_here():
    from crasp.cli import build_parser
    from validation.training.device import device_name, resolve_device

    parser = build_parser()
    assert parser.parse_args(["validate", "sort"]).device == "auto"
    assert parser.parse_args(["arithmetic", "xu"]).device == "auto"
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert device_name("auto") == expected and resolve_device("auto").type == expected
    assert device_name("cpu") == "cpu" and device_name("cuda:1") == "cuda:1"
