"""The GPU path of training, against the CPU path: the same seeds, from the same initial weights,
give the same losses on both, for every kind of model the harness builds. Skipped where no CUDA
GPU is available (CI has none); run on a GPU with ``pytest tests/test_gpu.py``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks import registry
from validation.config import ModelConfig, TrainConfig, Variant
from validation.models.build import Trained
from validation.training.group import SeedGroup

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

CASES = [
    ("xu_addition", "ape", ModelConfig(2, 2, 32)),  # decoder, fused causal attention
    ("bin_majority", "nope", ModelConfig(1, 2, 16)),
    ("xu_addition", "rpe", ModelConfig(2, 2, 32)),  # decoder, relative positions
    ("sabbaghi_addition", "ape", ModelConfig(2, 2, 32, encoder=True)),  # encoder, fused attention
    ("sabbaghi_multiplication_1", "upe", ModelConfig(2, 2, 32, encoder=True)),
    ("duan_addition", "sinusoidal", ModelConfig(2, 2, 32)),  # encoder-decoder, masked fused attention
    ("duan_addition", "abs", ModelConfig(2, 2, 32)),
]


def _losses(task: str, variant: str, model: ModelConfig, device: str, steps: int = 3,
            seeds: tuple[int, ...] = (0, 1)) -> list[torch.Tensor]:
    config = TrainConfig(lr=1e-3, steps=100, warmup=0, eval_every=100, test_size=8)
    group = SeedGroup(registry.get(task), Variant.parse(variant), model, config, seeds=seeds, device=device)
    return [group.train_step().cpu() for _ in range(steps)]


@pytest.mark.parametrize("task, variant, model", CASES, ids=[f"{t}-{v}" for t, v, _ in CASES])
def test_a_group_of_seeds_trains_on_the_gpu_as_on_the_cpu(task, variant, model):
    on_cpu, on_gpu = _losses(task, variant, model, "cpu"), _losses(task, variant, model, "cuda")
    for step, (cpu, gpu) in enumerate(zip(on_cpu, on_gpu)):
        assert torch.isfinite(gpu).all()
        assert torch.allclose(cpu, gpu, rtol=1e-3, atol=1e-5), f"step {step}: cpu {cpu} gpu {gpu}"


def test_a_single_seed_trains_on_the_gpu_as_on_the_cpu():
    model = ModelConfig(2, 2, 32)
    on_cpu, on_gpu = (_losses("xu_addition", "ape", model, device, seeds=(1,)) for device in ("cpu", "cuda"))
    assert all(torch.allclose(cpu, gpu, rtol=1e-3, atol=1e-5) for cpu, gpu in zip(on_cpu, on_gpu))


def test_dropout_trains_on_the_gpu():
    """Dropout draws differ between devices, so only that the loss falls is compared."""
    model = ModelConfig(2, 2, 32, encoder=True, dropout=0.1)
    config = TrainConfig(lr=3e-3, steps=100, warmup=0, eval_every=100, test_size=8)
    group = SeedGroup(registry.get("sabbaghi_addition"), Variant.parse("rpe"), model, config, seeds=(0, 1),
                      device="cuda")
    first = group.train_step()
    for _ in range(40):
        last = group.train_step()
    assert torch.isfinite(last).all() and (last < first).all()


def test_a_trained_model_answers_alike_on_both_devices():
    task = registry.get("xu_addition")
    config = TrainConfig(lr=3e-3, steps=100, warmup=0, eval_every=100, test_size=8)
    group = SeedGroup(task, Variant.parse("ape"), ModelConfig(2, 2, 32), config, seeds=(0,), device="cuda")
    for _ in range(30):
        group.train_step()
    weights = {n: p[0].detach().cpu() for n, p in group.params.items()}
    examples = task.sample_bin(1, 6, 64, np.random.default_rng(0))
    answers = [Trained.from_weights(task, Variant.parse("ape"), ModelConfig(2, 2, 32), weights, device).exact(examples)
               for device in ("cpu", "cuda")]
    assert (answers[0] == answers[1]).all()


def test_batches_reach_the_gpu_without_waiting_and_intact():
    """Batches go to the GPU from page-locked memory without blocking the host; what arrives is
    the batch."""
    from validation.data.encoding import Encoding

    task = registry.get("bin_majority")
    encoding = Encoding.of(task)
    batch = encoding.collate([task.example(("1", "0", "1")), task.example(("0",))])
    moved = batch.to("cuda")
    torch.cuda.synchronize()
    for name in ("ids", "positions", "targets", "mask"):
        got, want = getattr(moved, name), getattr(batch, name)
        assert got.is_cuda and torch.equal(got.cpu(), want)


@pytest.mark.parametrize("name", ["dyck1", "contains_ab", "anbncn"])
def test_a_compiled_model_moved_to_the_gpu_answers_as_on_the_cpu(name):
    """A compiled Limit Transformer run once on the CPU, then moved: its cached compact weights
    follow it, and the GPU's outputs are the interpreter's."""
    from crasp import check, library
    from limit_transformer import compile
    from limit_transformer.agreement import compare, random_inputs
    from limit_transformer.runner import prepare

    checked = check(library.load(name))
    model = compile(checked)
    inputs, offsets = random_inputs(checked, 4, 200, np.random.default_rng(1))
    assert compare(model, checked, inputs, offsets).ok
    tokens, positions, _ = prepare(model, inputs, np.asarray(offsets))
    on_cpu = model.outputs(model(tokens, positions))
    model.to("cuda")
    on_gpu = model.outputs(model(tokens.cuda(), positions.cuda()))
    assert on_gpu.is_cuda and torch.equal(on_gpu.cpu(), on_cpu)
    assert compare(model, checked, inputs, offsets).ok


def test_the_compile_command_verifies_on_the_gpu(capsys):
    from crasp import check, library
    from crasp.cli import main
    from limit_transformer import CompileConfig, compile

    assert compile(check(library.load("dyck1")), CompileConfig(device="cuda")).W_E.is_cuda
    status = main(["compile", "dyck1", "--device", "cuda", "--verify-length", "500", "--count", "3"])
    out = capsys.readouterr().out
    assert status == 0 and "verification: " in out


@pytest.mark.parametrize("task, variant, model", [
    ("bin_majority", "ape", ModelConfig(1, 1, 16)),                              # the smallest paper model
    ("xu_addition", "rpe", ModelConfig(2, 2, 32)),                               # relative positions as a mask
    ("sabbaghi_addition", "rpe", ModelConfig(2, 2, 32, encoder=True, dropout=0.1)),  # an encoder, keyed dropout
    ("duan_addition", "abs", ModelConfig(2, 2, 32)),                             # the encoder-decoder's biases
], ids=["bin_majority", "xu-rpe", "sabbaghi-dropout", "duan-abs"])
def test_the_captured_step_replays_cuda_graphs_that_follow_the_eager_step(task, variant, model):
    """On a GPU the captured step warms up, captures a graph per width and replays it: the losses
    and weights follow the eager step's to float tolerance, and no capture fails."""
    from validation.training.step import CapturedStep

    config = TrainConfig(lr=1e-3, steps=100, warmup=2, eval_every=100, test_size=8, precision="fp32")
    groups = {step: SeedGroup(registry.get(task), Variant.parse(variant), model, config, seeds=(0, 1),
                              device="cuda", step=step) for step in ("eager", "captured")}
    losses = {step: torch.stack([group.train_step().clone() for _ in range(12)]).cpu()
              for step, group in groups.items()}
    captured = groups["captured"].steps
    assert isinstance(captured, CapturedStep) and captured.graphs and not captured.failure, captured.failure
    torch.testing.assert_close(losses["captured"], losses["eager"], rtol=1e-3, atol=1e-4)
    for name, p in groups["eager"].params.items():
        torch.testing.assert_close(groups["captured"].params[name], p, rtol=1e-3, atol=1e-4)


def test_device_drawn_examples_are_the_cpu_s_bit_for_bit():
    """Counter-based numbers: example k of a seed's stream is the same on the GPU as on the CPU."""
    from validation.data.device import SampledStream
    from validation.data.encoding import Encoding

    for name in ("majority", "addition", "duan_addition", "xu_mod101_multiplication", "sabbaghi_multiplication"):
        task = registry.get(name)
        on = {device: SampledStream(task, Encoding.of(task), 3, device).draw(100, 256) for device in ("cpu", "cuda")}
        for field in ("ids", "positions", "targets", "mask"):
            assert torch.equal(getattr(on["cuda"], field).cpu(), getattr(on["cpu"], field)), (name, field)


def test_groups_side_by_side_on_one_gpu_store_what_they_store_one_after_another(tmp_path):
    from validation.config import TrainConfig as Train
    from validation.runs import protocol
    from validation.runs.executors import Sequential, Settings, SideBySide, plan_jobs
    from validation.runs.store import Store

    tiny = protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), Train(steps=40, batch_size=8, eval_every=20, test_size=8, precision="fp32")),
        seeds=2, count_threshold=0.0)
    jobs = plan_jobs([("bin_majority", "ape"), ("parity", "ape"), ("sort", "nope")], tiny)
    Sequential().run(jobs, Settings(str(tmp_path / "one"), tiny, device="cuda"))
    together = SideBySide(3).run(jobs, Settings(str(tmp_path / "side"), tiny, device="cuda"))
    assert together.done == 3 and not together.failed

    def runs(root):
        return sorted((r.spec.key, r.steps, r.accuracy) for r in Store(root).runs())

    side, one = runs(tmp_path / "side"), runs(tmp_path / "one")
    assert [run[:2] for run in side] == [run[:2] for run in one]  # a GPU's sums may round otherwise: close, not equal
    assert all(abs(a - b) <= 0.1 for s, o in zip(side, one) for a, b in zip(s[2], o[2]))
