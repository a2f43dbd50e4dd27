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


def _clip_with(monkeypatch, clip):
    monkeypatch.setattr(SeedGroup, "_clip_per_seed", lambda self, max_norm: clip(
        [p.grad for p in self.params.values() if p.grad is not None], max_norm))


def test_training_clips_as_before(monkeypatch):
    """On the CPU a group trains bit for bit as with the per-tensor clipping; with the fused norms
    (a GPU's default) to float tolerance."""
    losses, params = _train()
    _clip_with(monkeypatch, clip_per_seed_reference)
    reference_losses, reference_params = _train()
    assert torch.equal(losses, reference_losses)
    assert all(torch.equal(params[name], reference_params[name]) for name in params)
    _clip_with(monkeypatch, lambda grads, max_norm: clip_per_seed(grads, max_norm, fused=True))
    fused_losses, fused_params = _train()
    torch.testing.assert_close(fused_losses, reference_losses, rtol=1e-5, atol=1e-6)
    for name in params:
        torch.testing.assert_close(fused_params[name], reference_params[name], rtol=1e-4, atol=1e-5)


def test_the_multi_tensor_adamw_trains_bit_for_bit_as_torch_s_cpu_default(monkeypatch):
    """On the CPU torch's AdamW loops over the tensors in Python unless asked for its multi-tensor
    form; the group asks for it, and trains exactly as the loop does."""
    losses, params = _train()
    built = SeedGroup._optimizer

    def looping(self):
        optimizer = built(self)
        assert all(group["foreach"] for group in optimizer.param_groups)
        for group in optimizer.param_groups:
            group["foreach"] = False
        return optimizer

    monkeypatch.setattr(SeedGroup, "_optimizer", looping)
    reference_losses, reference_params = _train()
    assert torch.equal(losses, reference_losses)
    assert all(torch.equal(params[name], reference_params[name]) for name in params)


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


# ---------------------------------------------------------------- the compiled step (opt-in)


def test_compile_mode_comes_from_the_keyword_or_the_environment(monkeypatch):
    from validation.training.group import COMPILE_VARIABLE, compile_mode

    monkeypatch.delenv(COMPILE_VARIABLE, raising=False)
    assert compile_mode() is None and compile_mode(True) == "default"
    for value, mode in (("", None), ("0", None), ("1", "default"), ("reduce-overhead", "reduce-overhead")):
        monkeypatch.setenv(COMPILE_VARIABLE, value)
        assert compile_mode() == mode
    assert compile_mode(False) is None  # the keyword wins over the environment


def test_compiled_step_follows_the_eager_one():
    """The whole step (losses, gradients, per-seed clipping, AdamW) compiled as one graph: a graph
    per batch width and group size, each taking seconds to build, so a task whose sequences all
    have one length (Xu et al.'s fixed width). The first step is eager (it creates AdamW's
    moments); the compiled ones keep the optimizer's state as an eager step does, so an eager
    step can follow them."""
    def run(compiled):
        config = TrainConfig(steps=20, batch_size=4, eval_every=10**6, test_size=2, grad_clip=0.05)
        group = SeedGroup(registry.get("xu_mod50_addition"), Variant.parse("ape"), ModelConfig(1, 1, 16), config,
                          seeds=(0, 1, 2), compile_step=compiled)
        losses = [group.train_step() for _ in range(4)]
        group.keep_only([0, 2])  # a smaller group: another graph
        losses += [group.train_step() for _ in range(2)]
        if compiled:
            assert group._whole_step.calls == 5 and not group._whole_step.failed  # every step but the first
            group._whole_step = None  # then eager steps on the state the compiled ones left
        losses += [group.train_step() for _ in range(2)]
        state = group.optimizer.state_dict()["state"]
        return ([loss.tolist() for loss in losses], {n: p.detach() for n, p in group.params.items()},
                [float(s["step"]) for s in state.values()], [s["exp_avg_sq"] for s in state.values()])

    compiled, eager = run(True), run(False)
    assert compiled[2] == eager[2] == [8.0] * len(eager[2])
    torch.testing.assert_close(compiled, eager, rtol=1e-4, atol=1e-5)


def test_a_step_torch_cannot_compile_runs_eagerly_and_says_so():
    def run(broken):
        config = TrainConfig(steps=20, batch_size=4, eval_every=10**6, test_size=2)
        group = SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), ModelConfig(1, 1, 16), config,
                          seeds=(0, 1), compile_step=broken)
        if broken:
            def fail(*arguments):
                raise RuntimeError("no compiler here\nsecond line")
            group._whole_step._compiled = fail
        losses = [group.train_step() for _ in range(3)]
        return [loss.tolist() for loss in losses], {n: p.detach() for n, p in group.params.items()}, group

    with pytest.warns(RuntimeWarning, match="failed to compile .RuntimeError: no compiler here.; training goes on"):
        broken = run(True)
    assert broken[2]._whole_step.failed and broken[2]._whole_step.calls == 0
    eager = run(False)
    assert broken[0] == eager[0] and all(torch.equal(broken[1][n], eager[1][n]) for n in eager[1])
