"""The ways a group takes its optimizer step, against each other and against torch: the eager
step's AdamW is torch's bit for bit; the captured step (static shapes, learning rate and step
count on the device: what a GPU replays as CUDA graphs) follows the eager one to float
tolerance, through padding, a smaller group, dropout and a checkpoint; a capture that fails
says why and steps without graphs."""

from __future__ import annotations

import io

import pytest
import torch

from tasks import registry
from validation.config import ModelConfig, TrainConfig, Variant
from validation.training.group import SeedGroup, stepping
from validation.training.optimizer import SeedAdamW, decays
from validation.training.step import CapturedStep

NAMES = ["blocks.0.attn.c_attn.weight", "blocks.0.attn.c_attn.bias", "blocks.0.ln_1.weight", "wte.weight"]


def _torch_adamw(params, lr_of, steps, generator, weight_decay=0.01):
    """``steps`` steps of torch.optim.AdamW (multi-tensor, the CPU path) on copies of ``params``."""
    leaves = [p.clone().requires_grad_() for p in params]
    decayed = [p for p, n in zip(leaves, NAMES) if decays(n)]
    plain = [p for p, n in zip(leaves, NAMES) if not decays(n)]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": weight_decay},
                                   {"params": plain, "weight_decay": 0.0}], lr=1.0, foreach=True)
    grads = []
    for step in range(steps):
        grads.append([torch.randn(p.shape, generator=generator) for p in params])
        for p, g in zip(leaves, grads[-1]):
            p.grad = g.clone()
        for group in optimizer.param_groups:
            group["lr"] = lr_of(step)
        optimizer.step()
    return [p.detach() for p in leaves], grads, optimizer


def test_host_mode_adamw_is_torch_s_bit_for_bit_and_device_mode_follows_it():
    generator = torch.Generator().manual_seed(0)
    params = [torch.randn(3, 8, 4, generator=generator), torch.randn(3, 8, generator=generator),
              torch.randn(3, 4, generator=generator), torch.randn(3, 6, 4, generator=generator)]
    lr_of = lambda step: 1e-2 * (1 - step / 30)  # noqa: E731
    expected, grads, torch_optimizer = _torch_adamw(params, lr_of, 25, generator)
    host, device = [p.clone() for p in params], [p.clone() for p in params]
    on_host = SeedAdamW(host, [decays(n) for n in NAMES], 0.01)
    on_device = SeedAdamW(device, [decays(n) for n in NAMES], 0.01, on_device=True)
    for step, g in enumerate(grads):
        on_host.update(host, g, lr_of(step))
        on_device.update(device, g, torch.tensor(lr_of(step)))
    assert all(torch.equal(h, e) for h, e in zip(host, expected))
    for d, e in zip(device, expected):
        torch.testing.assert_close(d, e, rtol=1e-5, atol=1e-6)
    # each loads the other's checkpoints, and torch's
    again = SeedAdamW([p.clone() for p in params], [decays(n) for n in NAMES], 0.01, on_device=True)
    again.load_state_dict(torch_optimizer.state_dict())
    assert again.step_count == 25 and all(torch.equal(a, b) for a, b in zip(again.exp_avg_sq, on_host.exp_avg_sq))
    torch_optimizer.load_state_dict(on_device.state_dict(lr=1e-3))


def _group(step, *, task="bin_majority", model=ModelConfig(1, 2, 16), seeds=(0, 1, 2), **train):
    config = TrainConfig(**{"steps": 40, "batch_size": 8, "eval_every": 10**6, "test_size": 2, "grad_clip": 0.5,
                            "warmup": 3, **train})
    return SeedGroup(registry.get(task), Variant.parse("ape"), model, config, seeds=seeds, step=step)


def _train(group, steps):
    return torch.stack([group.train_step().clone() for _ in range(steps)])


@pytest.mark.parametrize("task, model", [
    ("bin_majority", ModelConfig(1, 2, 16)),                # seq2seq, batches of varying width
    ("tomita_4", ModelConfig(2, 1, 16)),                     # next-set flags
    ("sabbaghi_addition", ModelConfig(1, 2, 16, encoder=True, dropout=0.2)),  # encoder, dropout
])
def test_the_captured_step_follows_the_eager_one(task, model):
    """Padded to a width quantum, its learning rate read on the device: the same losses and weights
    to float tolerance, also after a seed leaves the group."""
    eager, captured = _group("eager", task=task, model=model), _group("captured", task=task, model=model)
    assert isinstance(captured.steps, CapturedStep) and captured.steps.name == "captured (no graph)"
    widths = set()
    for group in (eager, captured):
        losses = _train(group, 6)
        group.keep_only([0, 2])
        losses = torch.cat([losses.flatten(), _train(group, 4).flatten()])
        widths.add(group.feed.next().ids.shape[-1])
        group.__dict__.setdefault("trained", losses)
    torch.testing.assert_close(captured.trained, eager.trained, rtol=1e-4, atol=1e-5)
    for name, p in eager.params.items():
        torch.testing.assert_close(captured.params[name], p, rtol=1e-4, atol=1e-5)
    if not model.encoder:  # the captured step's batches are padded to a multiple of 16 places
        assert any(w % 16 == 0 for w in widths)


def test_a_captured_group_resumes_from_an_eager_checkpoint_and_back():
    eager = _group("eager")
    _train(eager, 5)
    buffer = io.BytesIO()
    torch.save(eager.state(), buffer)
    later = _train(eager, 5)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    captured = _group("captured")
    captured.restore(state)
    torch.testing.assert_close(_train(captured, 5), later, rtol=1e-4, atol=1e-5)
    back = _group("eager")
    back.restore(captured.state())
    assert back.step == captured.step == 10 and back.steps.optimizer.step_count == 10


def test_a_step_that_cannot_be_captured_says_why_and_trains_without_graphs():
    """On a CPU a CUDA graph cannot be made: asked for one, the step warns and goes on as without."""
    plain = _group("captured")
    graphs = _group("captured")
    graphs.steps.graphs_wanted = True
    with pytest.warns(RuntimeWarning, match="could not be captured as a CUDA graph"):
        losses = _train(graphs, 4)
    assert graphs.steps.failure and "no graph" in graphs.steps.name
    assert torch.equal(losses, _train(plain, 4))


def test_a_seed_with_dropout_trains_alike_in_any_group_and_either_step():
    model = ModelConfig(1, 2, 16, dropout=0.3)
    alone = _train(_group("eager", model=model, seeds=(1,)), 5)[:, 0]
    together = _train(_group("eager", model=model, seeds=(0, 1, 2)), 5)[:, 1]
    captured = _train(_group("captured", model=model, seeds=(2, 1)), 5)[:, 1]
    torch.testing.assert_close(together, alone, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(captured, alone, rtol=1e-4, atol=1e-5)


def test_the_compiled_step_follows_the_eager_one():
    """torch.compile of the captured step's function (fused kernels): a task of one width, so one graph."""
    eager = _train(_group("eager", task="xu_mod50_addition", model=ModelConfig(1, 1, 16)), 4)
    compiled = _train(_group("compiled", task="xu_mod50_addition", model=ModelConfig(1, 1, 16)), 4)
    torch.testing.assert_close(compiled, eager, rtol=1e-4, atol=1e-5)


def test_stepping_is_chosen_once_and_bad_names_are_refused():
    from validation.config import ValidationError

    assert stepping(None, torch.device("cpu")) == "eager" and stepping("auto", torch.device("cuda")) == "captured"
    with pytest.raises(ValidationError, match="--step fast: expected one of auto, eager, captured, compiled"):
        stepping("fast", torch.device("cpu"))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_every_precision_trains_and_bf16_stays_near_fp32(precision):
    reference = _train(_group("eager", precision="tf32"), 3)
    losses = _train(_group("eager", precision=precision), 3)
    assert torch.isfinite(losses).all()
    tolerance = 0 if precision == "fp32" else 2e-2  # a CPU has no TF32: tf32 is fp32 there
    torch.testing.assert_close(losses, reference, rtol=tolerance, atol=tolerance)


def test_device_drawn_batches_train_like_any_other():
    """sampler "device": the same group trains on batches drawn as tensor operations."""
    group = _group("captured", sampler="device")
    losses = _train(group, 5)
    assert torch.isfinite(losses).all() and group.feed.used == 5 * 8
    again = _group("captured", sampler="device")
    assert torch.equal(_train(again, 5), losses)  # example k of a seed's stream is a pure function of (seed, k)
    resumed = _group("captured", sampler="device")
    resumed.restore(group.state())
    assert resumed.feed.used == group.feed.used
    torch.testing.assert_close(_train(resumed, 3), _train(group, 3), rtol=1e-5, atol=1e-6)
