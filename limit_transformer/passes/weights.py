"""Pass 4, weight emission: the scheduled lowered form as numpy arrays, one per parameter.

Takes a :class:`~limit_transformer.passes.lowered.Lowered`, its
:class:`~limit_transformer.passes.schedule.Schedule` and the config, and gives :class:`Weights`:
the embeddings, per layer one uniform head and one head per local offset, the MLPs and the
unembedding, with the :class:`~limit_transformer.model.ModelSpec` describing them. Large
weights are stored as :class:`SparseArray` (their nonzero entries).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..config import CompileConfig
from ..model import HEAVISIDE, HeadInfo, ModelSpec
from .lowered import BOS_TOKEN, Lowered, Read, Unit
from .schedule import Schedule


DENSE_LIMIT = 1 << 20
"""Weights with more entries than this are stored sparse (coordinates and values)."""


@dataclass(frozen=True)
class SparseArray:
    """A weight given by its nonzero entries: ``indices`` is (ndim, nnz)."""

    shape: tuple[int, ...]
    indices: np.ndarray
    values: np.ndarray

    def dense(self) -> np.ndarray:
        array = np.zeros(self.shape)
        np.add.at(array, tuple(self.indices), self.values)
        return array


class _Entries:
    """Accumulates the nonzero entries of one weight; ``array()`` is dense when small."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape
        self.entries: dict[tuple[int, ...], float] = {}

    def __setitem__(self, index: tuple[int, ...], value: float) -> None:
        self.entries[index] = value

    def add(self, index: tuple[int, ...], value: float) -> None:
        self.entries[index] = self.entries.get(index, 0.0) + value

    def array(self) -> np.ndarray | SparseArray:
        entries = {k: v for k, v in self.entries.items() if v != 0}
        indices = np.array(list(entries), dtype=np.int64).reshape(-1, len(self.shape)).T
        values = np.array(list(entries.values()), dtype=np.float64)
        sparse = SparseArray(self.shape, indices, values)
        return sparse.dense() if math.prod(self.shape) <= DENSE_LIMIT else sparse


@dataclass
class Weights:
    """Pass 4's result: every parameter as a float64 numpy array, plus the spec."""

    spec: ModelSpec
    arrays: dict[str, np.ndarray | SparseArray] = field(default_factory=dict)
    heaviside: list[np.ndarray] = field(default_factory=list)


def emit_weights(lowered: Lowered, schedule: Schedule, config: CompileConfig) -> Weights:
    """Pass 4: embeddings, heads (one uniform head and one head per offset in each layer), MLPs."""
    d = len(lowered.labels)
    vocabulary = tuple(lowered.token_slots)
    arrays: dict[str, np.ndarray | SparseArray] = {}
    W_E = _Entries(len(vocabulary), d)
    for row, symbol in enumerate(vocabulary):
        for slot in lowered.token_slots[symbol]:
            W_E[row, slot] = 1.0
    W_pos = _Entries(lowered.period, d)
    for residue, slots in enumerate(lowered.position_slots):
        for slot in slots:
            W_pos[residue, slot] = 1.0
    arrays["embed.W_E"], arrays["pos_embed.W_pos"] = W_E.array(), W_pos.array()

    layers = range(schedule.n_layers)
    heads: list[list[tuple[int | None, list[Read]]]] = [[] for _ in layers]
    units: list[list[Unit]] = [[] for _ in layers]
    for index, operation in enumerate(lowered.operations):
        layer = schedule.layer[index]
        if isinstance(operation, Read):
            group = next((g for g in heads[layer] if g[0] == operation.offset), None)
            if group is None:
                group = (operation.offset, [])
                heads[layer].append(group)
            group[1].append(operation)
        else:
            units[layer].extend(operation.units)
    for layer_heads in heads:
        layer_heads.sort(key=lambda g: -1 if g[0] is None else g[0])
    d_head = max((len(reads) for layer_heads in heads for _, reads in layer_heads), default=1)

    infos, windows, widths, margins, heaviside = [], [], [], [], []
    label = lowered.labels
    for layer in layers:
        n_heads = len(heads[layer])
        window = max((g[0] + 1 for g in heads[layer] if g[0] is not None), default=0)
        W_V = _Entries(n_heads, d, d_head)
        W_O = _Entries(n_heads, d_head, d)
        phi = np.zeros((n_heads, window))
        layer_infos = []
        for h, (offset, reads) in enumerate(heads[layer]):
            for k, read in enumerate(reads):
                W_V[h, read.source, k] = 1.0
                W_O[h, k, read.target] = 1.0
            if offset is not None:
                phi[h, offset] = config.bias
            layer_infos.append(HeadInfo(
                "uniform" if offset is None else "offset",
                tuple(label[r.source] for r in reads), tuple(label[r.target] for r in reads), offset))
        prefix = f"blocks.{layer}"
        arrays[f"{prefix}.attn.W_Q"] = np.zeros((n_heads, d, 0))
        arrays[f"{prefix}.attn.W_K"] = np.zeros((n_heads, d, 0))
        arrays[f"{prefix}.attn.W_V"], arrays[f"{prefix}.attn.W_O"] = W_V.array(), W_O.array()
        arrays[f"{prefix}.attn.phi"], arrays[f"{prefix}.attn.phi_tail"] = phi, np.zeros(n_heads)
        width = len(units[layer])
        W_in, b_in, W_out = _Entries(d, width), np.zeros(width), _Entries(width, d)
        for u, unit in enumerate(units[layer]):
            for slot, coefficient in unit.inputs:
                W_in.add((slot, u), coefficient)
            b_in[u] = unit.bias
            for slot, coefficient in unit.outputs:
                W_out.add((u, slot), coefficient)
        arrays[f"{prefix}.mlp.W_in"], arrays[f"{prefix}.mlp.b_in"] = W_in.array(), b_in
        arrays[f"{prefix}.mlp.W_out"], arrays[f"{prefix}.mlp.b_out"] = W_out.array(), np.zeros(d)
        infos.append(tuple(layer_infos))
        windows.append(window)
        widths.append(width)
        margins.append(tuple(u.margin for u in units[layer]))
        heaviside.append(np.array([u.activation == HEAVISIDE for u in units[layer]], dtype=bool))

    W_U = _Entries(d, len(lowered.outputs))
    for column, (_, output) in enumerate(lowered.outputs):
        if output is not None:
            W_U[output, column] = 1.0
    arrays["unembed.W_U"] = W_U.array()
    spec = ModelSpec(
        vocabulary=vocabulary, labels=lowered.labels, period=lowered.period, heads=tuple(infos),
        outputs=tuple(name for name, _ in lowered.outputs), output_kind=lowered.output_kind,
        mlp_widths=tuple(widths), margins=tuple(margins), window=tuple(windows), d_head=d_head,
        local_bias=config.bias, max_length=config.max_length, dtype=config.dtype,
        source=lowered.source, bos=BOS_TOKEN,
    )
    return Weights(spec, arrays, heaviside)
