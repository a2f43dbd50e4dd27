"""Export a compiled Limit Transformer to TransformerLens's ``HookedTransformer``.

:func:`export_lens` builds the weights and the ``HookedTransformerConfig`` arguments of a
HookedTransformer with ``n_ctx`` positions that decides every output of the compiled model
alike, on every input of up to ``n_ctx - 1`` tokens (the exported model runs at offset 0, as
TransformerLens numbers positions from 0). It imports nothing from TransformerLens;
:meth:`LensExport.hooked_transformer` and :func:`to_transformer_lens` build the model and need
the optional extra (``pip install '.[interp]'``). The mapping (docs/interpretability.md):

* **Residual stream.** The compiled residual slots, then, when some head has a positional bias,
  a one-hot code of the position (``n_ctx`` dimensions, labelled ``position p``).
* **Embeddings.** ``W_E`` is the compiled token table; row p of ``W_pos`` is the periodic vector
  of ``p mod period`` followed by the one-hot code of p.
* **Attention.** TransformerLens scores ``q_i . k_j / attn_scale``; the export turns the scale off
  (``use_attn_scale=False``). A head with a bias ``phi`` reads the one-hot code of i as its
  query, and its key maps the code of j to ``sum_d phi(d) e_(j + d)``, so the score is
  ``phi(i - j)`` with no rounding at all. Heads without bias keep ``W_Q = W_K = 0`` (uniform).
  ``W_V`` and ``W_O`` are the compiled ones, padded to one ``d_head`` and one head count.
* **MLPs.** A ReLU unit is copied. A Heaviside unit H(z) whose input takes values in
  ``{<= 0} U {>= m}`` (m: the margin of its class at ``n_ctx`` positions, see
  :func:`limit_transformer.ape.margin`) becomes two ReLU units,
  ``ReLU(z/w - 1/2) - ReLU(z/w - 3/2)`` with w the largest power of two <= m/2: they give 0 for
  ``z <= w/2`` and 1 for ``z >= 3w/2``, so a rounding error below w/2 in z still gives exactly
  0 or 1. Dividing by a power of two is exact.
* **Read-out.** ``W_U`` is the compiled one and ``b_U = -1/2``: output k is true where
  ``logits[..., k] > 0``.

Softmax attention in TransformerLens rounds differently from the compiled model (which sums
numerator and denominator first), so the two agree in their decisions, not bit for bit. The
export bounds the rounding error of every sublayer in the model's dtype, for any order of the
matrix products' sums (IEEE arithmetic in that dtype, with or without fused multiply-adds, and an
``exp`` within ``EXP_ULPS`` units of roundoff): a Heaviside input must stay within w/2 of its
exact value and a logit within 1/2. Where the bound fails (float32 at long contexts), where the compiled model is only
exact up to a shorter length, or where an operation has no exact image (content-dependent
attention scores, a Heaviside unit without a recorded margin), it raises :class:`LensError`
with the reason.

>>> from crasp import library
>>> from limit_transformer import compile
>>> export = export_lens(compile(library.load("contains_ab")), n_ctx=16)
>>> export.config["d_model"], export.config["n_heads"], export.config["d_head"]
(25, 2, 16)
>>> export.logit_error < 1e-9
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import torch

from crasp.errors import CraspError, InputError

from .model import Attention, LimitTransformer, dense

FORMAT = "crasp-transformer-lens"
VERSION = 1
INSTALL = "pip install 'crasp-lengthgen[interp]' (or: pip install 'transformer_lens>=3,<4')"
DEFAULT_MAX_PARAMETERS = 1 << 27
"""The largest exported model :func:`export_lens` builds unless told otherwise (dense entries)."""

EXP_ULPS = 4.0
"""The rounding error assumed of torch's exp, in units of roundoff (libm and SLEEF: below 1)."""


class LensError(CraspError):
    """A model with no exact TransformerLens image at the asked context, or a missing library."""


def require_transformer_lens():
    """The ``transformer_lens`` module, with ``HookedTransformer`` (TransformerLens 2 or 3)."""
    try:
        import transformer_lens
        from transformer_lens import HookedTransformer, HookedTransformerConfig  # noqa: F401
    except ImportError as error:
        raise LensError(f"TransformerLens with HookedTransformer is needed ({error}); {INSTALL}") from None
    return transformer_lens


@dataclass
class LensExport:
    """A HookedTransformer's config and weights, with what it takes to feed it and read it.

    ``config`` holds the keyword arguments of ``HookedTransformerConfig`` (``dtype`` a torch
    dtype); ``state_dict`` the parameters by their TransformerLens names (the attention's
    ``mask`` and ``IGNORE`` buffers are left to the model). Token ids are positions in
    ``vocabulary``: ``vocabulary[0]`` is the beginning-of-sequence token, the last one
    ``<|other|>``. ``heads[l][h]`` says what exported head h of layer l does. ``logit_error``
    bounds |logit - (compiled read-out - 1/2)|; ``heaviside_error`` the largest rounding error of
    a Heaviside pair's input, in units where 1/2 would flip it.
    """

    config: dict
    state_dict: dict[str, torch.Tensor]
    vocabulary: tuple[str, ...]
    outputs: tuple[str, ...]
    output_kind: str
    labels: tuple[str, ...]
    heads: tuple[tuple[str, ...], ...]
    source: str = ""
    bos: str = "<|bos|>"
    logit_error: float = 0.0
    heaviside_error: float = 0.0
    units: tuple[tuple[str, ...], ...] = field(default=(), repr=False)
    """units[l][u]: what exported MLP unit u of layer l computes (for reading ``hook_post``)."""

    @property
    def n_ctx(self) -> int:
        return int(self.config["n_ctx"])

    # ------------------------------------------------------------------ building the model

    def hooked_transformer(self, device: str = "cpu"):
        """The ``HookedTransformer`` (needs the ``interp`` extra); its ``crasp`` attribute is this
        export without the weights, which :func:`run_lens` reads."""
        require_transformer_lens()
        from transformer_lens import HookedTransformer, HookedTransformerConfig

        model = HookedTransformer(HookedTransformerConfig(**{**self.config, "device": device}))
        missing, unexpected = model.load_state_dict(self.state_dict, strict=False)
        buffers = {name for name, _ in model.named_buffers()}
        if unexpected or set(missing) - buffers:
            raise LensError(
                "this TransformerLens names its weights differently from the export "
                f"(missing {sorted(set(missing) - buffers)[:4]}, unexpected {sorted(unexpected)[:4]}); {INSTALL}")
        model.crasp = replace(self, state_dict={})
        return model.eval().requires_grad_(False)

    # ------------------------------------------------------------------ inputs and outputs

    def tokens(self, inputs: Iterable, *, allow_unknown: bool = False) -> tuple[torch.Tensor, np.ndarray]:
        """Token ids (batch, n+1), the beginning-of-sequence token first and shorter inputs
        padded at the end (causal attention never reads the padding), and the lengths."""
        from crasp.interpreter import as_batch

        from .runner import token_ids

        batch = as_batch(inputs)
        longest = max((len(seq) for seq in batch), default=0)
        if longest + 1 > self.n_ctx:
            raise InputError(f"an input has {longest} tokens but the exported model has {self.n_ctx} "
                             f"positions (the beginning-of-sequence token included); export with a larger n_ctx")
        tokens, lengths = token_ids(self.vocabulary, self.bos, batch, allow_unknown=allow_unknown)
        return torch.as_tensor(tokens, dtype=torch.long), lengths

    def decode(self, logits: torch.Tensor, inputs: Sequence, lengths: np.ndarray):
        """A :class:`crasp.RunResult` from the logits (batch, n+1, outputs): output true where > 0."""
        from crasp.interpreter import as_tokens

        from .runner import as_result

        outputs = (logits[:, 1:, :] > 0).cpu().numpy()
        batch = [as_tokens(item) for item in inputs]
        return as_result(outputs, batch, lengths, np.zeros(len(lengths), dtype=np.int64), self.output_kind,
                         self.outputs)

    # ------------------------------------------------------------------ files

    def save(self, path: str | Path) -> Path:
        """Write everything to one torch file: ``torch.load(path, weights_only=True)`` reads it
        back as a dict with ``config`` (dtype as a name), ``state_dict`` and ``crasp``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"vocabulary": list(self.vocabulary), "outputs": list(self.outputs),
                "output_kind": self.output_kind, "labels": list(self.labels),
                "heads": [list(h) for h in self.heads], "units": [list(u) for u in self.units],
                "source": self.source, "bos": self.bos, "logit_error": self.logit_error,
                "heaviside_error": self.heaviside_error}
        config = {**self.config, "dtype": str(self.config["dtype"]).removeprefix("torch.")}
        torch.save({"format": FORMAT, "version": VERSION, "config": config,
                    "state_dict": {k: v.contiguous() for k, v in self.state_dict.items()}, "crasp": meta}, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "LensExport":
        """Read a file written by :meth:`save`."""
        try:
            saved = torch.load(Path(path), weights_only=True, map_location="cpu")
        except FileNotFoundError:
            raise LensError(f"{path}: no such file") from None
        except Exception as error:  # noqa: BLE001 - any unreadable file is reported the same way
            raise LensError(f"{path}: not a readable torch file ({str(error)[:200]})") from None
        if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("version") != VERSION:
            raise LensError(f"{path}: not a {FORMAT} file of version {VERSION}")
        meta = saved["crasp"]
        config = {**saved["config"], "dtype": getattr(torch, saved["config"]["dtype"])}
        return cls(config=config, state_dict=saved["state_dict"], vocabulary=tuple(meta["vocabulary"]),
                   outputs=tuple(meta["outputs"]), output_kind=meta["output_kind"],
                   labels=tuple(meta["labels"]), heads=tuple(tuple(h) for h in meta["heads"]),
                   units=tuple(tuple(u) for u in meta["units"]), source=meta["source"], bos=meta["bos"],
                   logit_error=meta["logit_error"], heaviside_error=meta["heaviside_error"])


# ---------------------------------------------------------------------- the mapping


def _power_of_two_below(value: float) -> float:
    """The largest power of two <= value (value > 0)."""
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, mantissa in [1/2, 1)
    return math.ldexp(1.0, exponent - 1)


def _written_label(labels: Sequence[str], row: torch.Tensor) -> str:
    columns = torch.nonzero(row).flatten().tolist()
    return ", ".join(labels[c] for c in columns[:2]) + (" ..." if len(columns) > 2 else "") or "nothing"


def export_lens(model: LimitTransformer, *, n_ctx: int | None = None,
                max_parameters: int = DEFAULT_MAX_PARAMETERS) -> LensExport:
    """The TransformerLens config and weights of ``model`` for ``n_ctx`` positions (the
    beginning-of-sequence token included; default ``max_length + 1``).

    Raises :class:`LensError` when no exact image exists at that context: see the module's
    documentation.
    """
    from .ape import TranslationError, margin

    spec = model.spec
    host = lambda weight: dense(weight).cpu()  # noqa: E731 - every weight, dense, on the CPU
    N = spec.max_length + 1 if n_ctx is None else int(n_ctx)
    if N < 2:
        raise LensError(f"n_ctx must be at least 2 positions (the beginning-of-sequence token and one token), not {N}")
    if N - 1 > spec.max_length:
        raise LensError(
            f"n_ctx {N} admits inputs of {N - 1} tokens, but the compiled model is exact only up to "
            f"{spec.max_length}; compile with max_length >= {N - 1} (crasp compile --verify-length)")
    if not spec.wrap and N > spec.period:
        raise LensError(f"the positional table has {spec.period} absolute rows, fewer than n_ctx {N}")
    dtype = model.W_E.dtype
    d = spec.d_model
    blocks = list(model.blocks)

    def bias_row(attn: Attention, h: int) -> torch.Tensor:
        """phi(i - j) at the distances 0..N-1."""
        phi, window = host(attn.phi), attn.phi.shape[1]
        distance = torch.arange(N)
        values = torch.full((N,), float(host(attn.phi_tail)[h]), dtype=dtype)
        inside = distance < window
        values[inside] = phi[h, distance[inside]].to(dtype)
        return values

    positional: list[list[bool]] = []
    for layer, block in enumerate(blocks):
        attn = block.attn
        flags = []
        for h in range(attn.n_heads):
            if bool(host(attn.W_Q[h]).any()) and bool(host(attn.W_K[h]).any()):
                raise LensError(
                    f"layer {layer} head {h} scores keys by their content (W_Q and W_K nonzero); the export "
                    "maps positional heads only, whose scores it reproduces without rounding")
            flags.append(bool((bias_row(attn, h) != 0).any()))
        positional.append(flags)
    P = N if any(any(flags) for flags in positional) else 0  # one-hot position dimensions
    D = max(d + P, 1)  # a program with a constant output has no residual slot; keep one zero dimension
    heads = max([1] + [block.attn.n_heads for block in blocks])
    d_head = max(1, spec.d_head, P)

    # The MLP units: a ReLU unit as it is, a Heaviside unit as two ReLUs on a power-of-two scale.
    mlp_units: list[list[_Unit]] = []
    for layer, block in enumerate(blocks):
        mlp = block.mlp
        W_in, b_in, W_out = host(mlp.W_in), host(mlp.b_in), host(mlp.W_out)
        heaviside = host(mlp.heaviside)
        units = []
        for u in range(W_in.shape[1]):
            if not bool(heaviside[u]):
                units.append(_Unit(W_in[:, u], float(b_in[u]), W_out[u], u, None, Fraction(float(b_in[u]))))
                continue
            kind = spec.margins[layer][u] if layer < len(spec.margins) and u < len(spec.margins[layer]) else ""
            written = _written_label(spec.labels, W_out[u])
            try:
                m = margin(kind, N, spec.local_bias)
            except TranslationError:
                raise LensError(
                    f"layer {layer} MLP unit {u} (writes {written}) is a Heaviside unit with no recorded margin "
                    f"class ({kind!r}): a step has no exact image as ReLUs unless its input keeps a known "
                    "distance from 0") from None
            w = _power_of_two_below(m / 2)
            scaled = W_in[:, u] / w
            if not torch.equal(scaled * w, W_in[:, u]) or not torch.isfinite(scaled).all():
                raise LensError(f"layer {layer} MLP unit {u} (writes {written}): its weights over the margin "
                                f"{m:.3g} leave the range of {spec.dtype}")
            exact = Fraction(float(b_in[u])) / Fraction(w)
            for part, shift, row in ((1, Fraction(1, 2), W_out[u]), (2, Fraction(3, 2), -W_out[u])):
                units.append(_Unit(scaled, float(exact - shift), row, u, part, exact - shift))
        mlp_units.append(units)
    d_mlp = max([0] + [len(units) for units in mlp_units])

    size = (len(spec.vocabulary) + N + len(spec.outputs)) * D + len(blocks) * (
        heads * (3 * D * d_head + d_head * D) + 2 * D * d_mlp)
    if size > max_parameters:
        raise LensError(
            f"the exported model would have {size:,} parameters (n_ctx {N}, residual width {D}, d_head "
            f"{d_head}), more than max_parameters {max_parameters:,}; export a shorter context")

    zeros = lambda *shape: torch.zeros(*shape, dtype=dtype)  # noqa: E731
    state: dict[str, torch.Tensor] = {}
    W_E = zeros(len(spec.vocabulary), D)
    W_E[:, :d] = host(model.W_E)
    W_pos = zeros(N, D)
    rows = torch.arange(N) % spec.period if spec.wrap else torch.arange(N)
    W_pos[:, :d] = host(model.W_pos)[rows]
    if P:
        W_pos[:, d:d + P] = torch.eye(N, dtype=dtype)
    state["embed.W_E"], state["pos_embed.W_pos"] = W_E, W_pos
    head_names: list[tuple[str, ...]] = []
    unit_names: list[tuple[str, ...]] = []
    biases: list[list[torch.Tensor | None]] = []
    for layer, block in enumerate(blocks):
        attn = block.attn
        prefix = f"blocks.{layer}"
        W_Q, W_K, W_V = (zeros(heads, D, d_head) for _ in range(3))
        W_O = zeros(heads, d_head, D)
        names: list[str] = []
        layer_biases: list[torch.Tensor | None] = []
        V, O = host(attn.W_V), host(attn.W_O)
        for h in range(heads):
            if h >= attn.n_heads:
                names.append("unused (padding: W_V = W_O = 0)")
                layer_biases.append(None)
                continue
            W_V[h, :d, : V.shape[2]] = V[h]
            W_O[h, : O.shape[1], :d] = O[h]
            info = spec.heads[layer][h] if layer < len(spec.heads) and h < len(spec.heads[layer]) else None
            reads = ", ".join(info.reads) if info is not None else "?"
            if positional[layer][h]:
                phi = bias_row(attn, h)
                W_Q[h, d:d + P, :N] = torch.eye(N, dtype=dtype)
                j = torch.arange(N)
                for distance in range(N):  # the key at j maps to phi(distance) e_(j + distance)
                    if phi[distance] != 0:
                        W_K[h, d + j[: N - distance], j[: N - distance] + distance] = phi[distance]
                support = torch.nonzero(phi).flatten().tolist()
                offset = f"offset {info.offset}" if info is not None and info.offset is not None else "biased"
                names.append(f"{offset} (phi nonzero at i - j in {support[:6]}); reads {reads}")
                layer_biases.append(phi)
            else:
                names.append(f"uniform; reads {reads}")
                layer_biases.append(zeros(N))
        state.update({f"{prefix}.attn.W_Q": W_Q, f"{prefix}.attn.W_K": W_K, f"{prefix}.attn.W_V": W_V,
                      f"{prefix}.attn.W_O": W_O, f"{prefix}.attn.b_Q": zeros(heads, d_head),
                      f"{prefix}.attn.b_K": zeros(heads, d_head), f"{prefix}.attn.b_V": zeros(heads, d_head),
                      f"{prefix}.attn.b_O": zeros(D)})
        head_names.append(tuple(names))
        biases.append(layer_biases)
        if d_mlp:
            W_in, b_in, W_out = zeros(D, d_mlp), zeros(d_mlp), zeros(d_mlp, D)
            names = []
            for k, unit in enumerate(mlp_units[layer]):
                W_in[:d, k], b_in[k], W_out[k, :d] = unit.column, unit.bias, unit.row
                written = _written_label(spec.labels, unit.row)
                if unit.part is None:
                    names.append(f"ReLU (compiled unit {unit.source}) -> {written}")
                else:
                    edge = "+ReLU(z/w - 1/2)" if unit.part == 1 else "-ReLU(z/w - 3/2)"
                    names.append(f"step (compiled unit {unit.source}) {edge} -> {written}")
            names += ["unused (padding)"] * (d_mlp - len(mlp_units[layer]))
            unit_names.append(tuple(names))
            state.update({f"{prefix}.mlp.W_in": W_in, f"{prefix}.mlp.b_in": b_in,
                          f"{prefix}.mlp.W_out": W_out, f"{prefix}.mlp.b_out": _padded(host(block.mlp.b_out), D)})
    W_U = zeros(D, len(spec.outputs))
    W_U[:d] = host(model.W_U)
    state["unembed.W_U"] = W_U
    state["unembed.b_U"] = torch.full((len(spec.outputs),), -0.5, dtype=dtype)

    heaviside_error, logit_error = _rounding_bounds(state, spec, mlp_units, biases, d, P, N, d_mlp)

    config = {
        "model_name": f"crasp-{Path(spec.source).stem or 'program'}",
        "n_layers": len(blocks), "d_model": D, "n_ctx": N, "d_head": d_head, "n_heads": heads,
        "d_mlp": d_mlp if d_mlp else None, "attn_only": d_mlp == 0,
        "d_vocab": len(spec.vocabulary), "d_vocab_out": len(spec.outputs),
        "act_fn": "relu", "normalization_type": None, "positional_embedding_type": "standard",
        "use_attn_scale": False, "default_prepend_bos": False, "init_weights": False,
        "dtype": dtype, "device": "cpu",
    }
    labels = spec.labels + tuple(f"position {p}" for p in range(P)) + ("unused",) * (D - d - P)
    return LensExport(config=config, state_dict=state, vocabulary=spec.vocabulary, outputs=spec.outputs,
                      output_kind=spec.output_kind, labels=labels, heads=tuple(head_names),
                      units=tuple(unit_names), source=spec.source, bos=spec.bos,
                      logit_error=logit_error, heaviside_error=heaviside_error)


@dataclass(frozen=True)
class _Unit:
    """One exported MLP unit: its input weights and bias, its output row, the compiled unit it
    comes from, which half of a Heaviside pair it is (None: a ReLU unit), and its exact bias."""

    column: torch.Tensor
    bias: float
    row: torch.Tensor
    source: int
    part: int | None
    exact_bias: Fraction


def _padded(vector: torch.Tensor, size: int) -> torch.Tensor:
    out = torch.zeros(size, dtype=vector.dtype)
    out[: len(vector)] = vector
    return out


# ---------------------------------------------------------------------- rounding bounds


def _gamma(k: float, u: float) -> float:
    """The classic bound k u / (1 - k u) on the relative error of k roundings."""
    return math.inf if k * u >= 1 else k * u / (1 - k * u)


def _is_power_of_two(values: np.ndarray) -> np.ndarray:
    mantissa, _ = np.frexp(np.abs(values))
    return (values == 0) | (mantissa == 0.5)


def _linear(B: np.ndarray, E: np.ndarray, W: np.ndarray, b: np.ndarray, u: float):
    """Bounds of x @ W + b from bounds on the true |x| (B) and on the error of x (E): the true
    output's bound, the output's error bound and the bound on its computed magnitude. Valid for
    any order of summation (an exact zero adds no rounding)."""
    A = np.abs(W)
    true = A.T @ B + np.abs(b)
    computed = A.T @ (B + E) + np.abs(b)
    terms = np.count_nonzero(W, axis=0) + (b != 0)
    exact_products = _is_power_of_two(W).all(axis=0)
    roundings = np.maximum(terms - 1, 0) + np.where(exact_products, 0, 1)
    gamma = np.array([_gamma(k, u) for k in roundings])
    return true, A.T @ E + gamma * computed, computed


def _add(B, E, Bo, Eo, u: float):
    """Bounds of the residual x + o, column by column (adding to an exact zero is exact)."""
    untouched = (Bo == 0) & (Eo == 0)
    fresh = (B == 0) & (E == 0)
    B_new = np.where(untouched, B, np.where(fresh, Bo, B + Bo))
    E_new = np.where(untouched, E, np.where(fresh, Eo, E + Eo + u * (B + E + Bo + Eo)))
    return B_new, E_new


def _rounding_bounds(state, spec, mlp_units, biases, d: int, P: int, N: int, d_mlp: int) -> tuple[float, float]:
    """Propagate bounds on every residual value and its rounding error through the exported
    model; refuse a Heaviside pair or a logit that rounding could flip. Returns the largest
    Heaviside input error (must stay below 1/2) and the largest logit error (below 1/2)."""
    u = {"float32": 2.0**-24, "float64": 2.0**-53}[spec.dtype]
    arr = lambda t: t.detach().to(torch.float64).numpy()  # noqa: E731
    W_E, W_pos = arr(state["embed.W_E"]), arr(state["pos_embed.W_pos"])
    B = np.abs(W_E).max(axis=0) + np.abs(W_pos).max(axis=0)
    one_sided = ~(W_E != 0).any(axis=0) | ~(W_pos != 0).any(axis=0)
    E = np.where(one_sided, 0.0, u * B)
    worst_unit = 0.0
    for layer, layer_biases in enumerate(biases):
        prefix = f"blocks.{layer}"
        W_V, W_O = arr(state[f"{prefix}.attn.W_V"]), arr(state[f"{prefix}.attn.W_O"])
        heads, D, d_head = W_V.shape
        if P and E[d:d + P].any():  # the one-hot code must be exact for the scores to be
            raise LensError("internal: the position code is not exact")  # pragma: no cover
        Bz, Ez = np.zeros(heads * d_head), np.zeros(heads * d_head)
        for h in range(heads):
            Bv, Ev, _ = _linear(B, E, W_V[h], np.zeros(d_head), u)
            if not Bv.any() and not Ev.any():
                continue
            phi = layer_biases[h]
            spread = float(phi.max() - phi.min()) if phi is not None else 0.0
            eps = 0.0 if spread == 0 else spread * u * (1 + u) + EXP_ULPS * u  # exp(s - max)
            rho = (1 + eps) * (1 + u) ** 2 / ((1 - eps) * (1 - _gamma(N - 1, u))) - 1  # the softmax
            Bz[h * d_head:(h + 1) * d_head] = Bv
            Ez[h * d_head:(h + 1) * d_head] = rho * (Bv + Ev) + Ev + _gamma(N, u) * (1 + rho) * (Bv + Ev)
        Bo, Eo, _ = _linear(Bz, Ez, W_O.reshape(heads * d_head, D), arr(state[f"{prefix}.attn.b_O"]), u)
        B, E = _add(B, E, Bo, Eo, u)
        if not d_mlp:
            continue
        W_in, b_in = arr(state[f"{prefix}.mlp.W_in"]), arr(state[f"{prefix}.mlp.b_in"])
        W_out, b_out = arr(state[f"{prefix}.mlp.W_out"]), arr(state[f"{prefix}.mlp.b_out"])
        Bp, Ep, Cp = _linear(B, E, W_in, b_in, u)
        terms = np.count_nonzero(W_in, axis=0) + (b_in != 0)
        exact_products = _is_power_of_two(W_in).all(axis=0)
        roundings = np.maximum(terms - 1, 0) + np.where(exact_products, 0, 1)
        true_h, err_h = Bp.copy(), Ep.copy()  # per unit; a pair's first unit carries the pair
        units = mlp_units[layer]
        for k, unit in enumerate(units):
            if unit.part is None:
                continue
            error = Ep[k] + abs(float(Fraction(unit.bias) - unit.exact_bias))  # the stored bias rounds
            worst_unit = max(worst_unit, error)
            if not error < 0.5:
                written = _written_label(spec.labels, torch.as_tensor(W_out[k, :d]))
                raise LensError(
                    f"layer {layer} MLP unit {unit.source} (a Heaviside step that writes {written}): in "
                    f"{spec.dtype} at {N} positions, rounding may move its input by {error:.3g} ramp widths, and "
                    "from 1/2 on the two ReLUs that replace the step are no longer exactly 0 or 1; use "
                    "float64 or a smaller n_ctx")
            if unit.part == 1:  # the pair's value rests on the first unit's row
                second = units[k + 1]
                pair_error = (abs(float(Fraction(unit.bias) - Fraction(second.bias) - 1))
                              + _gamma(roundings[k], u) * Cp[k] + _gamma(roundings[k + 1], u) * Cp[k + 1])
                true_h[k], err_h[k] = 1.0, pair_error
                true_h[k + 1], err_h[k + 1] = 0.0, 0.0
        A = np.abs(W_out)
        out_terms = np.count_nonzero(W_out, axis=0) + (b_out != 0)
        out_roundings = np.maximum(out_terms - 1, 0) + np.where(_is_power_of_two(W_out).all(axis=0), 0, 1)
        Bo = A.T @ true_h + np.abs(b_out)
        Eo = A.T @ err_h + np.array([_gamma(k, u) for k in out_roundings]) * (A.T @ (Bp + Ep) + np.abs(b_out))
        B, E = _add(B, E, Bo, Eo, u)
    _, E_logit, _ = _linear(B, E, arr(state["unembed.W_U"]), arr(state["unembed.b_U"]), u)
    logit_error = float(E_logit.max(initial=0.0))
    if not logit_error < 0.5:
        raise LensError(f"the logits' rounding error in {spec.dtype} at {N} positions may reach "
                        f"{logit_error:.3g}, which could flip an output; use float64 or a smaller n_ctx")
    return float(worst_unit), logit_error


# ---------------------------------------------------------------------- the HookedTransformer


def to_transformer_lens(model: LimitTransformer, *, n_ctx: int | None = None, device: str = "cpu"):
    """A ``transformer_lens.HookedTransformer`` that decides every output of ``model`` alike on
    inputs of up to ``n_ctx - 1`` tokens (see :func:`export_lens`; needs the ``interp`` extra)."""
    require_transformer_lens()
    return export_lens(model, n_ctx=n_ctx).hooked_transformer(device)


def transformer_lens_weights(model: LimitTransformer, *, n_ctx: int | None = None) -> tuple[dict, dict]:
    """``(config, state_dict)``: ``HookedTransformerConfig(**config)`` and the weights to load
    into it (``strict=False``: the model's own ``mask`` buffers are not included), without
    importing TransformerLens."""
    export = export_lens(model, n_ctx=n_ctx)
    return export.config, export.state_dict


def load_transformer_lens(path: str | Path, device: str = "cpu"):
    """The HookedTransformer saved at ``path`` (``crasp compile --export tl -o PATH``)."""
    return LensExport.load(path).hooked_transformer(device)


def run_lens(model, inputs: Iterable, *, allow_unknown: bool = False, export: LensExport | None = None):
    """Run an exported HookedTransformer on token sequences: a :class:`crasp.RunResult`, as
    :func:`limit_transformer.run` gives for the compiled model (offset 0)."""
    export = export if export is not None else getattr(model, "crasp", None)
    if export is None:
        raise LensError("this HookedTransformer carries no crasp export: pass export=")
    batch = list(inputs)
    tokens, lengths = export.tokens(batch, allow_unknown=allow_unknown)
    with torch.no_grad():
        logits = model(tokens.to(model.cfg.device), return_type="logits")
    return export.decode(logits, batch, lengths)
