"""The arithmetic papers' model variants: relative and uniform positions, and the encoder."""

import math

import numpy as np
import pytest
import torch

from tasks import registry
from tasks.arithmetic import sabbaghi_tasks
from validation.runs import protocol
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.data.encoding import Encoding
from validation.models.gpt import GPT
from validation.models.layers import Attention, relative_index
from tasks.alignment import leading_operand_width
from validation.training.group import SeedGroup


def test_relative_variants_parse():
    assert Variant.parse("rpe") == Variant("rpe", "rpe", clip=64)
    assert Variant.parse("upe12") == Variant("upe12", "upe", clip=12)
    assert ModelConfig.parse("2l4h64d-enc") == ModelConfig(2, 4, 64, encoder=True)
    assert ModelConfig(2, 4, 64, encoder=True).label == "2l4h64d-enc"
    for bad in ("rpe0", "rpe-3", "upex"):
        with pytest.raises(ValidationError):
            Variant.parse(bad)


def _naive_attention(attention, x: torch.Tensor) -> torch.Tensor:
    """Shaw et al.'s scores written out pair by pair: e_ij = q_i . (k_j + a_r(i,j)) / sqrt(d_head),
    with r(i, j) the clipped offset j - i, or the uniform vector of key j when j is a leading
    operand digit; softmax over the keys a query may see."""
    length, width = x.shape
    heads, size = attention.n_head, width // attention.n_head
    q, k, v = attention.c_attn(x).split(width, dim=1)
    out = torch.zeros(length, width)
    for h in range(heads):
        cols = slice(h * size, (h + 1) * size)
        for i in range(length):
            scores = []
            keys = range(i + 1) if attention.causal else range(length)
            for j in keys:
                if 1 <= j <= attention.uniform:
                    row = 2 * attention.clip + j
                else:
                    row = max(-attention.clip, min(attention.clip, j - i)) + attention.clip
                vector = attention.relative.weight[row]
                scores.append(float(q[i, cols] @ (k[j, cols] + vector)) / math.sqrt(size))
            weights = torch.tensor(scores).softmax(0)
            out[i, cols] = sum(w * v[j, cols] for w, j in zip(weights, keys))
    return attention.c_proj(out)


@pytest.mark.parametrize("encoder", [False, True])
@pytest.mark.parametrize("variant,uniform", [("rpe2", 0), ("upe2", 3)])
def test_relative_attention_matches_its_definition(encoder, variant, uniform):
    torch.manual_seed(3)
    model = GPT(ModelConfig(1, 2, 8, encoder=encoder), vocab_size=5, n_positions=1, variant=variant, uniform=uniform)
    attention = model.blocks[0].attn
    with torch.no_grad():
        attention.relative.weight.normal_()  # make the relative term large enough to matter
        x = torch.randn(1, 9, 8)
        assert torch.allclose(attention(x)[0], _naive_attention(attention, x[0]), atol=1e-5)


def test_cross_attention_matches_its_definition_and_reads_old_checkpoints():
    """Queries from x, keys and values from the memory, through the rows of the one projection;
    an encoder-decoder checkpoint with ``query`` and ``key_value`` apart loads into it unchanged."""
    torch.manual_seed(4)
    config = ModelConfig(1, 2, 8)
    attention = Attention(config)
    x, memory = torch.randn(1, 5, 8), torch.randn(1, 7, 8)
    mask = torch.randn(1, 1, 5, 7)
    weight, bias = attention.c_attn.weight, attention.c_attn.bias
    q, k, v = x[0] @ weight[:8].t() + bias[:8], memory[0] @ weight[8:16].t() + bias[8:16], memory[0] @ weight[16:].t() + bias[16:]
    expected = torch.zeros(5, 8)
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        scores = q[:, cols] @ k[:, cols].t() / 2.0 + mask[0, 0]
        expected[:, cols] = scores.softmax(-1) @ v[:, cols]
    with torch.no_grad():
        out, weights = attention(x, memory, mask=mask, record=True)
        assert torch.allclose(out[0], attention.c_proj(expected), atol=1e-5)
        assert torch.allclose(attention(x, memory, mask=mask)[0], out, atol=1e-5)
        assert weights.shape == (1, 2, 5, 7)
        old = {"query.weight": weight[:8], "query.bias": bias[:8], "key_value.weight": weight[8:],
               "key_value.bias": bias[8:], "c_proj.weight": attention.c_proj.weight, "c_proj.bias": attention.c_proj.bias}
        loaded = Attention(config)
        loaded.load_state_dict({name: t.clone() for name, t in old.items()})
        assert torch.equal(loaded.c_attn.weight, weight) and torch.equal(loaded.c_attn.bias, bias)


def test_relative_positions_are_clipped_and_translation_invariant():
    index = relative_index(12, 3)
    assert index[0, 5] == index[0, 11] == 6 and index[11, 0] == index[7, 0] == 0
    assert torch.equal(index[2:, 2:], relative_index(10, 3))  # only offsets matter
    uniform = relative_index(12, 3, uniform=2)
    assert set(uniform[:, 1].tolist()) == {7} and set(uniform[:, 2].tolist()) == {8}
    # without absolute positions the model ignores position ids entirely
    torch.manual_seed(0)
    model = GPT(ModelConfig(2, 2, 16), vocab_size=7, n_positions=1, variant="rpe4")
    ids = torch.randint(0, 7, (2, 10))
    zeros = torch.zeros(2, 10, dtype=torch.long)
    assert model.wpe is None and torch.allclose(model(ids, zeros), model(ids, zeros), atol=0)


def test_decoder_is_causal_and_encoder_bidirectional_with_relative_positions():
    torch.manual_seed(0)
    ids = torch.randint(0, 7, (3, 10))
    changed = ids.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 7
    at = torch.zeros(3, 10, dtype=torch.long)
    for encoder in (False, True):
        model = GPT(ModelConfig(2, 2, 16, encoder=encoder), vocab_size=7, n_positions=1, variant="rpe4")
        same_prefix = torch.allclose(model(ids, at)[:, :6], model(changed, at)[:, :6], atol=1e-6)
        assert same_prefix == (not encoder)


def test_uniform_positions_need_a_fixed_leading_operand():
    assert leading_operand_width(registry.get("sabbaghi_multiplication")) == 3
    assert leading_operand_width(sabbaghi_tasks(width=6)[0]) == 6
    with pytest.raises(registry.TaskError, match="fixed width"):
        leading_operand_width(registry.get("majority"))
    with pytest.raises(ValidationError, match="uniform positions"):
        GPT(ModelConfig(1, 1, 8), vocab_size=5, n_positions=1, variant="upe4")


def test_aligned_tasks_need_an_encoder_and_decoder_tasks_refuse_one():
    config = TrainConfig(steps=1, batch_size=2, eval_every=1, test_size=2)
    with pytest.raises(ValidationError, match="needs an encoder"):
        SeedGroup(registry.get("sabbaghi_addition"), Variant.parse("rpe"), ModelConfig(1, 1, 8), config, [0])
    with pytest.raises(ValidationError, match="use a decoder"):
        SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), ModelConfig(1, 1, 8, encoder=True), config, [0])


def test_aligned_encoding_reads_outputs_at_their_positions():
    task = sabbaghi_tasks(width=4)[0]
    encoding = Encoding.of(task)
    assert encoding.vocabulary.count("<pad>") == 1
    example = task.example(("<pad>", "<pad>", "9", "5", "+", "<pad>", "<pad>", "<pad>", "7"))
    batch = encoding.collate([example])
    checked = (batch.targets[0] != -100).nonzero().flatten().tolist()
    assert checked == [5, 6, 7, 8, 9]
    assert "".join(encoding.vocabulary[int(batch.targets[0, k])] for k in checked).replace("<pad>", "") == "102"
    shorter = sabbaghi_tasks(width=3)[0].example(("<pad>", "9", "5", "+", "<pad>", "<pad>", "7"))
    with pytest.raises(ValidationError, match="one length"):
        encoding.collate([example, shorter])


@pytest.fixture
def one_thread():
    """Torch on one thread: a second one speeds this small model up by nothing, and under
    `pytest -n 2` on 2 cores, with the other worker busy, its parallel regions wait on a thread
    that has no core (the training took several times longer, spinning)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_relative_encoder_learns_small_aligned_addition(one_thread):
    """End to end: an encoder with relative positions learns 2-digit aligned addition in seconds."""
    task = sabbaghi_tasks(width=2)[0]
    assert task.train_range == (1, 2) and task.bins == ((1, 2),)
    # 900 steps: 0.975-1.0 for seeds 0-4 (0.92-0.97 after 600)
    group = SeedGroup(task, Variant.parse("rpe4"), ModelConfig(2, 4, 64, encoder=True),
                      TrainConfig(lr=3e-3, steps=900, warmup=50, eval_every=300, test_size=200), [0])
    (result,) = group.run()
    assert result.accuracy[0] >= 0.9


def test_sabbaghi_plans_train_encoders_and_refuse_other_variants():
    addition = registry.get("sabbaghi_addition")
    cpu = protocol.PRESETS["cpu"].plan(addition, Variant.parse("rpe"))
    assert cpu.model.encoder and cpu.task.bins == ((1, 5), (6, 10), (11, 20)) and cpu.task.train_range == (1, 5)
    assert not cpu.train.stop_when_exact  # extrapolation keeps changing after the training range is exact
    assert cpu.model.dropout == 0.1  # the paper's BERT dropout, which the cpu scale needs too
    paper = protocol.PRESETS["paper"].plan(addition, Variant.parse("ape"))
    assert paper.model == ModelConfig(6, 8, 768, encoder=True, dropout=0.1) and paper.task.bins[-1] == (21, 50)
    assert paper.train.lr == 1e-4 and paper.train.train_size == 100_000 and not paper.train.stop_when_exact
    multiplication = protocol.PRESETS["paper"].plan(registry.get("sabbaghi_multiplication"), Variant.parse("upe"))
    assert multiplication.model.n_layer == 9 and multiplication.train.train_size == 500_000
    single = protocol.PRESETS["paper"].plan(registry.get("sabbaghi_multiplication_1"), Variant.parse("upe"))
    assert single.model.n_layer == 6 and single.train.train_size == 100_000  # as for addition, in the paper
    with pytest.raises(ValidationError, match="compare ape, rpe and upe"):
        protocol.PRESETS["cpu"].plan(addition, Variant.parse("nope"))
    with pytest.raises(ValidationError, match="Duan et al. train an encoder-decoder"):
        protocol.PRESETS["paper"].plan(registry.get("duan_successor"), Variant.parse("ape"))


def test_xu_plans_train_decoders_on_d_n():
    addition = registry.get("xu_addition")
    cpu = protocol.PRESETS["cpu"].plan(addition, Variant.parse("rpe"))
    digits = protocol.XU_CPU_DIGITS
    assert not cpu.model.encoder and cpu.task.train_range == (digits, digits)
    assert cpu.task.bins == ((1, digits - 1), (digits, digits), (digits + 1, 9), (10, 20))
    assert cpu.task.training_bin == 1 and not cpu.train.stop_when_exact  # a fixed schedule, as Xu et al. train
    assert all(cpu.task.measure(cpu.task.sample_train(np.random.default_rng(k)).tokens[1:43]) == digits
               for k in range(20))
    paper = protocol.PRESETS["paper"].plan(registry.get("xu_multiplication"), Variant.parse("ape"))
    assert paper.model == ModelConfig(6, 6, 384) and paper.train.train_size == 500_000
    assert paper.task.train_range == (3, 3) and paper.task.bins[-1] == (7, 10) and not paper.train.stop_when_exact
    with pytest.raises(ValidationError, match="compare ape and rpe"):
        protocol.PRESETS["cpu"].plan(addition, Variant.parse("upe"))
    with pytest.raises(ValidationError, match="1 to 8 digits"):
        protocol.trained_on(addition, 9)
