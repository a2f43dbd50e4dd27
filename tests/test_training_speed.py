"""The training step's fast paths against the plain ones they replace: fused per-seed gradient
clipping, and collation of a batch with numpy scatters."""

from __future__ import annotations

import pytest
import torch

from tasks import registry
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.data.encoding import Encoding
from validation.data.streams import TrainingStream, held_out_sets
from validation.training.group import SeedGroup
from validation.training.step import clip_per_seed, clip_per_seed_reference

# ---------------------------------------------------------------- per-seed gradient clipping

SHAPES = [(7,), (5, 3), (2, 3, 4), (16, 16), (1,)]


def _grads(seeds: int, scales: list[float], generator: torch.Generator) -> list[torch.Tensor]:
    """Random stacked gradients whose seed s is scaled by scales[s]."""
    scale = torch.tensor(scales)
    return [torch.randn(seeds, *shape, generator=generator) * scale.view(-1, *([1] * len(shape)))
            for shape in SHAPES]


def _clip_grad_norm(grads: list[torch.Tensor], max_norm: float) -> None:
    """Per seed, torch.nn.utils.clip_grad_norm_ on that seed's slices of every gradient."""
    for s in range(grads[0].shape[0]):
        params = []
        for g in grads:
            p = torch.nn.Parameter(torch.empty_like(g[s]))
            p.grad = g[s].clone()
            params.append(p)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        for g, p in zip(grads, params):
            g[s] = p.grad


@pytest.mark.parametrize("max_norm", [0.5, 1.0, 3.0])
def test_fused_clipping_equals_per_seed_clip_grad_norm(max_norm):
    generator = torch.Generator().manual_seed(0)
    # seeds well below, near and well above the threshold
    grads = _grads(6, [1e-3, 0.02, 0.08, 0.3, 1.0, 10.0], generator)
    fused, reference, plain = ([g.clone() for g in grads] for _ in range(3))
    norms = clip_per_seed(fused, max_norm, fused=True)
    expected = torch.stack([g.flatten(1).square().sum(1) for g in grads]).sum(0).sqrt()
    assert (norms > max_norm).any() and (norms < max_norm).any()
    torch.testing.assert_close(norms, expected, rtol=1e-6, atol=0)
    clip_per_seed_reference(reference, max_norm)
    _clip_grad_norm(plain, max_norm)
    for f, r, p, g in zip(fused, reference, plain, grads):
        torch.testing.assert_close(f, r, rtol=1e-6, atol=1e-9)
        torch.testing.assert_close(f, p, rtol=1e-6, atol=1e-9)
    below = norms < max_norm  # factor clamps at 1: those seeds are left exactly as they were
    for f, g in zip(fused, grads):
        assert torch.equal(f[below], g[below])


def test_unfused_clipping_is_the_reference_bit_for_bit():
    generator = torch.Generator().manual_seed(2)
    grads = _grads(4, [0.01, 0.5, 2.0, 50.0], generator)
    reference = [g.clone() for g in grads]
    assert torch.equal(clip_per_seed(grads, 1.0, fused=False), clip_per_seed_reference(reference, 1.0))
    for g, r in zip(grads, reference):
        assert torch.equal(g, r)


@pytest.mark.parametrize("fused", [True, False])
def test_clipping_handles_one_seed_and_no_gradients(fused):
    generator = torch.Generator().manual_seed(1)
    grads = _grads(1, [5.0], generator)
    reference = [g.clone() for g in grads]
    clip_per_seed(grads, 1.0, fused=fused)
    clip_per_seed_reference(reference, 1.0)
    for g, r in zip(grads, reference):
        torch.testing.assert_close(g, r, rtol=1e-6, atol=1e-9)
    assert clip_per_seed([], 1.0, fused=fused).numel() == 0


def _train(steps=12):
    config = TrainConfig(steps=20, batch_size=8, eval_every=10**6, test_size=2, grad_clip=0.5)
    group = SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), ModelConfig(1, 2, 16), config,
                      seeds=(0, 1, 2))
    return torch.stack([group.train_step() for _ in range(steps)]), group.params


def test_training_clips_as_before(monkeypatch):
    """On the CPU a group trains bit for bit as with the per-tensor clipping; with the fused norms
    (a GPU's default) to float tolerance."""
    import validation.training.step as step

    losses, params = _train()
    monkeypatch.setattr(step, "clip_per_seed", clip_per_seed_reference)
    reference_losses, reference_params = _train()
    assert torch.equal(losses, reference_losses)
    assert all(torch.equal(params[name], reference_params[name]) for name in params)
    monkeypatch.setattr(step, "clip_per_seed", lambda grads, max_norm: clip_per_seed(grads, max_norm, fused=True))
    fused_losses, fused_params = _train()
    torch.testing.assert_close(fused_losses, reference_losses, rtol=1e-5, atol=1e-6)
    for name in params:
        torch.testing.assert_close(fused_params[name], reference_params[name], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- collation

FORMATS = ["bin_majority",       # seq2seq
           "addition",           # seq2seq with training offsets
           "tomita_3",           # next-set flags
           "aa_star",            # accept
           "sabbaghi_addition",  # aligned (encoder)
           "duan_addition",      # Duan et al.'s seq2seq
           "repeat_copy"]


def _assert_same(batch, reference):
    for name in ("ids", "positions", "targets", "mask"):
        got, want = getattr(batch, name), getattr(reference, name)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert torch.equal(got, want), name


@pytest.mark.parametrize("name", FORMATS)
def test_collate_equals_the_per_example_reference(name):
    task = registry.get(name)
    encoding = Encoding.of(task)
    stream = TrainingStream(task, 3)
    training = stream.next(24)
    if task.format.value == "aligned":  # one length a batch
        training = [e for e in training if len(e.tokens) == len(training[0].tokens)]
    for examples in (training, training[:1], *held_out_sets(task, 5)):
        _assert_same(encoding.collate(examples), encoding._collate_reference(examples))


def test_collate_refuses_what_the_reference_refuses():
    task = registry.get("bin_majority")
    encoding = Encoding.of(task)
    example = task.example(("1", "0"))
    bad = type(example)((*example.tokens[:-1], "x"), example.checked, example.targets, example.length)
    with pytest.raises(ValidationError, match="token 'x'"):
        encoding.collate([example, bad])
    far = type(example)(example.tokens, example.checked, example.targets, example.length, encoding.n_positions)
    with pytest.raises(ValidationError, match="does not fit"):
        encoding.collate([far])
