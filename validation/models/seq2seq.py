"""Duan et al.'s encoder-decoder (arXiv 2310.11984): decoder blocks that attend to their own
outputs (causally) and to the source, whose encoder is the identity (the source embeddings, as in
the authors' released code), with the attention biases of :mod:`validation.models.attention_bias`.

It reads the harness's sequences ``<bos> source <sep> target <eos>`` whole, so batches, targets,
training and probes are those of the decoder-only model; the layout of each row (where the
source ends, where the operator is) is read from the token ids. Three variants:

* ``sinusoidal``: sinusoidal positions of source index and output index (the vanilla model);
* ``abs``: attention bias scaffolding: self- and cross-attention windowed to the aligned line and
  ``window`` lines behind it, and cyclic positions (index mod ``period``), a source token's index
  being its distance along the task's alignment (its place value in reversed-output arithmetic);
* ``abc``: attention bias calibration: no positions, and in every layer the bias tables calibrated
  from a trained ``sinusoidal`` model (:func:`calibrate`), from its last layer's attention or, with
  ``abc-layers``, from every layer's.

Dropout, when the config asks for it, acts as in :mod:`validation.models.gpt`: on the embeddings (which
are also the memory), the attention weights and each sublayer's output (Duan et al.'s released
configurations use 0.3).

Cross-attention also sees ``<bos>``, unbiased, as a null key: an output whose lines reach no
source token (the carry digit and ``<eos>`` of a reversed sum) attends there, which tells it that
it is past the input. Without it, those outputs of an ABC model could not tell each other apart.

>>> import torch
>>> from validation.config import ModelConfig, Variant
>>> from tasks import registry
>>> from validation.data.encoding import Encoding
>>> encoding = Encoding.of(registry.get("duan_successor"))
>>> model = EncoderDecoder(ModelConfig(1, 2, 16), encoding, Variant.parse("abs"))
>>> batch = encoding.collate([encoding.task.example(("4", "9"))])
>>> model(batch.ids, batch.positions).shape
torch.Size([1, 8, 14])
"""

from __future__ import annotations

import math

import torch
from torch import nn

from validation.config import ModelConfig, ValidationError, Variant
from validation.data.encoding import PAD, Encoding
from validation.models.layers import Attention, Dropout, feed_forward, number_sites

from . import attention_bias as lines

SEP = "<sep>"


OPERATORS = ("+", "*")


def sinusoidal(index: torch.Tensor, width: int) -> torch.Tensor:
    """Vaswani et al.'s encoding of integer positions (any shape) into ``width`` features."""
    rates = torch.exp(torch.arange(0, width, 2, device=index.device) * (-math.log(10_000.0) / width))
    angles = index.to(torch.float32)[..., None] * rates
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)[..., :width]


class DecoderBlock(nn.Module):
    """Pre-LayerNorm: self-attention, cross-attention to the source, a GELU MLP of width 4d; with
    dropout on the attention weights and on each sublayer's output."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.ln_1, self.ln_2, self.ln_3 = (nn.LayerNorm(config.d_model) for _ in range(3))
        self.attn, self.cross = Attention(config), Attention(config)
        self.mlp = feed_forward(config)
        self.drop_attn, self.drop_cross, self.drop_mlp = Dropout(config), Dropout(config), Dropout(config)

    def forward(self, x, memory, self_mask, cross_mask, record=False, noise=None):
        h = self.ln_1(x)
        mixed, own = self.attn(h, mask=self_mask, record=record, noise=noise)
        x = x + self.drop_attn(mixed, noise)
        mixed, source = self.cross(self.ln_2(x), memory, mask=cross_mask, record=record, noise=noise)
        x = x + self.drop_cross(mixed, noise)
        return x + self.drop_mlp(self.mlp(self.ln_3(x)), noise), (own, source)


class EncoderDecoder(nn.Module):
    """The model; ``variant.scheme`` is ``sin``, ``abs`` or ``abc`` (see the module's text), and
    ``scheme`` is kept to decide on positions and biases.
    The bias tables are frozen parameters (``requires_grad`` False), so they travel with the
    weights; a model built for ``abc`` has MASKED tables until calibrated ones replace them
    (:func:`validation.models.build.overwrite`)."""

    def __init__(self, config: ModelConfig, encoding: Encoding, variant: Variant, *,
                 window: int = 1, period: int = 3) -> None:
        super().__init__()
        if not variant.scheme.seq2seq:
            raise ValidationError(f"variant {variant.name}: the encoder-decoder takes sinusoidal, abs or abc")
        if encoding.uses_flags or SEP not in encoding.vocabulary:
            raise ValidationError(f"task {encoding.task.name!r}: the encoder-decoder needs a sequence-to-sequence "
                                  f"task (<bos> input <sep> output)")
        self.config, self.scheme, self.period = config, variant.scheme, period
        self.sep, self.pad = encoding.id(SEP), encoding.id(PAD)
        self.operators = tuple(encoding.id(t) for t in OPERATORS if t in encoding.vocabulary)
        self.half_width = encoding.n_positions
        self.aligned = lines.alignment(encoding.task) if self.scheme.scaffolded else ()
        self.wte = nn.Embedding(len(encoding.vocabulary), config.d_model)
        self.blocks = nn.ModuleList(DecoderBlock(config) for _ in range(config.n_layer))
        self.ln_memory = nn.LayerNorm(config.d_model)
        self.ln_f = nn.LayerNorm(config.d_model)
        self.drop = Dropout(config)
        self.self_bias = self.cross_bias = None
        if self.scheme.bias_tables:
            heads = config.n_head
            if self.scheme.scaffolded:
                own = lines.scaffold(lines.SELF, lines.SELF[:1], heads=heads, half=self.half_width, window=window)
                source = lines.scaffold(lines.CROSS, self.aligned, heads=heads, half=self.half_width, window=window)
            else:
                own = torch.full((heads, len(lines.SELF), 2 * self.half_width + 1), lines.MASKED)
                source = torch.full((heads, len(lines.CROSS), 2 * self.half_width + 1), lines.MASKED)
            self.self_bias = nn.Parameter(own, requires_grad=False)
            self.cross_bias = nn.Parameter(source, requires_grad=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        number_sites(self)

    def _index(self, where: lines.Layout) -> tuple[torch.Tensor, torch.Tensor]:
        """The position index of each source token and of each output."""
        if self.scheme.scaffolded:
            best = torch.full_like(where.source_index, 1 << 30)
            for family in self.aligned:
                r, covered = lines.distance(family, where)
                best = torch.where(covered, torch.minimum(best, r), best)
            index = torch.where(best < (1 << 30), best, 0)  # a token off every aligned line: index 0
            return index % self.period, where.output_index.clamp(min=0) % self.period
        return where.source_index.clamp(min=0), where.output_index.clamp(min=0)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor | None = None, noise: torch.Tensor | None = None,
                record: bool = False):
        """Logits of the next token at every position (``positions`` is unused: the layout is
        read from ``ids``); ``noise`` turns dropout on (:func:`validation.models.layers.keyed_dropout`).
        With ``record``, also every block's (self, cross) attention weights, first block first."""
        where = lines.layout(ids, sep=self.sep, pad=self.pad, operators=self.operators)
        x = self.wte(ids) * math.sqrt(self.config.d_model)
        if self.scheme.sinusoidal:
            source_at, output_at = self._index(where)
            at = torch.where(where.source, source_at, output_at)
            x = x + sinusoidal(at, self.config.d_model)
        x = self.drop(x, noise)  # the source embeddings are the memory, so dropout reaches both
        memory = self.ln_memory(x)
        length = ids.shape[-1]
        eye = torch.eye(length, dtype=torch.bool, device=ids.device)
        causal = (where.output_index[:, None, :] <= where.output_index[:, :, None])
        own_allowed = (where.target[:, :, None] & where.target[:, None, :] & causal) | eye
        null = (torch.arange(length, device=ids.device) == 0)  # <bos>: the null key of cross-attention
        source_allowed = (where.source | null)[:, None, :].expand(-1, length, -1)
        own_mask = self._mask(own_allowed, self.self_bias, lines.SELF, where)
        source_mask = torch.where(null, 0.0, self._mask(source_allowed, self.cross_bias, lines.CROSS, where))
        recorded = []
        for block in self.blocks:
            x, weights = block(x, memory, own_mask, source_mask, record, noise)
            recorded.append(weights)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return (logits, tuple(recorded)) if record else logits

    @staticmethod
    def _mask(allowed, table, families, where) -> torch.Tensor:
        blocked = torch.where(allowed, 0.0, float("-inf"))[:, None]
        return blocked if table is None else blocked + lines.bias(table, families, where)
