"""The Limit Transformer as a torch module.

A Limit Transformer (Huang et al. 2025, Definition 4, as made concrete in ``docs/compiler.md``)
reads a sequence that starts with a beginning-of-sequence token at position 0. The input at
position i is a token embedding plus a *periodic* positional vector, ``W_pos[i mod period]``.
Each attention head scores key j for query i with ``x_j W_K . x_i W_Q + phi(i - j)``, where
``phi`` is nonzero only on the finite window ``0..tau`` (LOCAL); attention is causal softmax.
MLPs have one hidden layer whose units are ReLU or Heaviside (``H(z) = 1 if z > 0 else 0``).

Attention is evaluated as ``sum_j e^(s_j - m) v_j / sum_j e^(s_j - m)``: the numerator and the
denominator are accumulated separately and divided once, as flash attention does. This is the
same function as softmax-then-average, and it keeps a uniform head exact: the sum of integer
values is an exact integer and one division rounds once. Heads whose query-key part is zero
(all heads a compiler emits) take a prefix-sum path that is linear in the length.

>>> import torch
>>> spec = ModelSpec(vocabulary=("<s>", "a"), labels=("bos", "a"), period=1,
...                  heads=((),), outputs=("accept",), output_kind="accept")
>>> model = LimitTransformer(spec)
>>> model.parameter_count()
10
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Iterator, overload

import torch
from torch import nn

from .activations import HEAVISIDE, RELU  # noqa: E402,F401  (re-exported)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class HeadInfo:
    """What a head does, for ``describe`` and the checks: ``kind`` is "uniform" or "offset"."""

    kind: str
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    offset: int | None = None


@dataclass(frozen=True)
class ModelSpec:
    """Everything about a Limit Transformer's shape and meaning that is not a weight.

    ``labels`` names every residual dimension; ``heads[l]`` describes layer l's heads; a layer's
    MLP has ``mlp_widths[l]`` hidden units whose activations and margins are in the weights'
    buffers. ``margins`` (per layer, per hidden unit) is the class of the smallest positive value
    a Heaviside unit's input takes: "boolean" (1/2), "count" (1/(2(n+1)) at length n), "local"
    (see :func:`local_margin`) or "" for ReLU units. ``wrap`` is True for a periodic positional
    table (row = position mod ``period``); False means rows are absolute positions.
    """

    vocabulary: tuple[str, ...]
    labels: tuple[str, ...]
    period: int
    heads: tuple[tuple[HeadInfo, ...], ...]
    outputs: tuple[str, ...]
    output_kind: str
    mlp_widths: tuple[int, ...] = ()
    margins: tuple[tuple[str, ...], ...] = ()
    window: tuple[int, ...] = ()
    d_head: int = 1
    d_qk: int = 0
    wrap: bool = True
    local_bias: float = 0.0
    max_length: int = 0
    dtype: str = "float64"
    source: str = ""
    bos: str = "<|bos|>"

    @property
    def d_model(self) -> int:
        return len(self.labels)

    @property
    def n_layers(self) -> int:
        return len(self.heads)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> "ModelSpec":
        raw = json.loads(text)
        raw["heads"] = tuple(
            tuple(HeadInfo(h["kind"], tuple(h["reads"]), tuple(h["writes"]), h["offset"]) for h in layer)
            for layer in raw["heads"]
        )
        for key in ("vocabulary", "labels", "outputs", "mlp_widths", "window"):
            raw[key] = tuple(raw[key])
        raw["margins"] = tuple(tuple(m) for m in raw["margins"])
        return cls(**raw)


_DENSE_COMPACT_LIMIT = 1 << 22


def _compact(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(rows, columns, matrix): the weight restricted to its nonzero rows and columns; the
    matrix is dense when small, else the sparse CSR transpose."""
    if weight.is_sparse:
        weight = weight.coalesce()
        r, c = weight.indices()
        values = weight.values()
    else:
        r, c = torch.nonzero(weight, as_tuple=True)
        values = weight[r, c]
    rows, r_new = torch.unique(r, return_inverse=True)
    columns, c_new = torch.unique(c, return_inverse=True)
    shape = (len(rows), len(columns))
    if shape[0] * shape[1] <= _DENSE_COMPACT_LIMIT:
        matrix = torch.zeros(shape, dtype=values.dtype, device=values.device)
        matrix[r_new, c_new] = values
    else:
        with warnings.catch_warnings():  # torch calls its CSR support "beta"; we use only matmul
            warnings.simplefilter("ignore", UserWarning)
            matrix = torch.sparse_coo_tensor(torch.stack([c_new, r_new]), values, (shape[1], shape[0]),
                                             check_invariants=False).coalesce().to_sparse_csr()
    return rows, columns, matrix


def fingerprint(weight: torch.Tensor) -> tuple:
    """What identifies a weight's current values for the caches of its compact form: the tensor,
    its in-place version, and where its storage is and what it holds (``module.to(device)`` or
    ``.to(dtype)`` keeps the parameter object and its version but swaps its storage).

    >>> w = torch.nn.Parameter(torch.ones(2, 2))
    >>> before = fingerprint(w)
    >>> w.data = w.data.to(torch.float64)
    >>> fingerprint(w) == before
    False
    """
    storage = weight._values() if weight.is_sparse else weight
    return id(weight), weight._version, storage.data_ptr(), weight.device, weight.dtype


def _remember(cache: dict, weight: torch.Tensor) -> bool:
    """Whether ``cache`` was made for ``weight`` as it is now; if not, it is emptied and keyed to
    it. The cache holds the storage its key names, so that no later storage takes its address."""
    key = fingerprint(weight)
    if cache.get("key") == key:
        return True
    cache.clear()
    cache["key"], cache["held"] = key, (weight._values() if weight.is_sparse else weight).detach()
    return False


def project(x: torch.Tensor, weight: torch.Tensor, cache: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """``x @ weight`` on the columns it can change: returns (columns, values over them).

    Compiled weights are about 0.1% nonzero and every sublayer writes a few residual
    dimensions, so only the rows and columns with a nonzero entry take part; the nonzero
    products and their sums are the ones a dense product would form.
    """
    if not _remember(cache, weight):
        cache["compact"] = _compact(weight.detach() if not weight.requires_grad else weight)
    rows, columns, matrix = cache["compact"]
    if weight.requires_grad:  # a model being trained: the plain product keeps the gradient
        return torch.arange(weight.shape[1], device=x.device), x @ weight
    picked = x[..., rows]
    if matrix.layout == torch.strided:
        return columns, picked @ matrix
    flat = picked.reshape(-1, picked.shape[-1])
    return columns, (matrix @ flat.t()).t().reshape(*picked.shape[:-1], len(columns))


def scatter(shape: tuple[int, ...], columns: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """A zero tensor of ``shape`` with ``values`` in the given columns of its last axis."""
    full = values.new_zeros(shape)
    full[..., columns] = values
    return full


def heads_as_matrix(weight: torch.Tensor, heads_first_axis: bool) -> torch.Tensor:
    """(heads, d_model, d_head) -> (d_model, heads*d_head), or (heads, d_head, d_model) ->
    (heads*d_head, d_model); sparse weights stay sparse."""
    heads, rows, columns = weight.shape
    if not weight.is_sparse:
        if heads_first_axis:
            return weight.reshape(heads * rows, columns)
        return weight.permute(1, 0, 2).reshape(rows, heads * columns)
    weight = weight.coalesce()
    h, r, c = weight.indices()
    if heads_first_axis:
        indices, shape = torch.stack([h * rows + r, c]), (heads * rows, columns)
    else:
        indices, shape = torch.stack([r, h * columns + c]), (rows, heads * columns)
    return torch.sparse_coo_tensor(indices, weight.values(), shape, check_invariants=False).coalesce()


def _rows(weight: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """weight[index] for a dense or sparse (rows, d) weight."""
    if not weight.is_sparse:
        return weight[index]
    picked = weight.index_select(0, index.flatten()).to_dense()
    return picked.view(*index.shape, weight.shape[1])


TRANSFORMER_LENS_NAMES = {"W_E": "embed.W_E", "W_pos": "pos_embed.W_pos", "W_U": "unembed.W_U"}
"""Module parameter name -> TransformerLens name, where they differ (blocks.* are the same)."""
_MODULE_NAMES = {lens: name for name, lens in TRANSFORMER_LENS_NAMES.items()}


def lens_name(name: str) -> str:
    """The TransformerLens-style name of a state-dict entry."""
    return TRANSFORMER_LENS_NAMES.get(name, name)


def module_name(name: str) -> str:
    """The state-dict name of a TransformerLens-style weight name."""
    return _MODULE_NAMES.get(name, name)


def dense(weight: torch.Tensor) -> torch.Tensor:
    """A weight as a dense tensor without gradient history (sparse weights are expanded)."""
    return (weight.to_dense() if weight.is_sparse else weight).detach()


def torch_dtype(name: str) -> torch.dtype:
    try:
        return {"float32": torch.float32, "float64": torch.float64}[name]
    except KeyError:
        raise ValueError(f"dtype must be float32 or float64, not {name!r}") from None


class Attention(nn.Module):
    """Causal multi-head attention with a local positional bias ``phi`` per head."""

    def __init__(self, d_model: int, n_heads: int, d_head: int, window: int, d_qk: int) -> None:
        super().__init__()
        self.W_Q = nn.Parameter(torch.zeros(n_heads, d_model, d_qk))
        self.W_K = nn.Parameter(torch.zeros(n_heads, d_model, d_qk))
        self.W_V = nn.Parameter(torch.zeros(n_heads, d_model, d_head))
        self.W_O = nn.Parameter(torch.zeros(n_heads, d_head, d_model))
        self.phi = nn.Parameter(torch.zeros(n_heads, window))
        """phi[h, d] is head h's bias at i - j = d, for d < window; beyond it, ``phi_tail``."""
        self.phi_tail = nn.Parameter(torch.zeros(n_heads))
        self._caches: dict[str, dict] = {"v": {}, "o": {}, "flat": {}}

    @property
    def n_heads(self) -> int:
        return self.W_Q.shape[0]

    def positional_only(self) -> bool:
        """True when no head's score depends on content (W_Q or W_K is zero for every head)."""
        q_zero = (self.W_Q == 0).flatten(1).all(dim=1)
        k_zero = (self.W_K == 0).flatten(1).all(dim=1)
        return bool((q_zero | k_zero).all())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """What the heads add to the residual stream (zero outside the columns they write)."""
        return scatter(x.shape, *self.delta(x))

    def delta(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        heads, d_model, d_head = self.W_V.shape
        if heads == 0:
            return torch.zeros(0, dtype=torch.long, device=x.device), x[..., :0]
        W_V, W_O = self._flat_weights()
        values = scatter((*x.shape[:2], heads * d_head), *project(x, W_V, self._caches["v"]))
        v = values.view(*x.shape[:2], heads, d_head).transpose(1, 2)
        if self.positional_only():
            z = self._positional(v)
        else:
            z = self._dense(x, v)
        z = z.transpose(1, 2).reshape(*x.shape[:2], heads * d_head)
        return project(z, W_O, self._caches["o"])

    def _flat_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        cache = self._caches["flat"]
        fresh = [_remember(cache.setdefault(name, {}), weight) for name, weight in (("v", self.W_V), ("o", self.W_O))]
        if not all(fresh) or "weights" not in cache:  # kept, so that project() finds its own cache for them
            cache["weights"] = (heads_as_matrix(self.W_V, False), heads_as_matrix(self.W_O, True))
        return cache["weights"]

    def _bias_at(self, distance: torch.Tensor) -> torch.Tensor:
        """phi(i - j) for a tensor of distances i - j >= 0: shape (heads, *distance.shape)."""
        window = self.phi.shape[1]
        inside = distance.clamp(max=max(window - 1, 0))
        values = self.phi[:, inside] if window else torch.zeros(
            (self.n_heads, *distance.shape), dtype=self.phi.dtype, device=self.phi.device)
        tail = self.phi_tail.view(-1, *([1] * distance.dim())).expand_as(values)
        return torch.where(distance < window, values, tail)

    def _dense(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        q = torch.einsum("bnd,hde->bhne", x, self.W_Q)
        k = torch.einsum("bnd,hde->bhne", x, self.W_K)
        positions = torch.arange(n, device=x.device)
        distance = positions[:, None] - positions[None, :]
        causal = distance >= 0
        scores = q @ k.transpose(-1, -2) + self._bias_at(distance.clamp(min=0))[None]
        scores = scores.masked_fill(~causal, float("-inf"))
        weights = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        return (weights @ v) / weights.sum(dim=-1, keepdim=True)

    def _positional(self, v: torch.Tensor) -> torch.Tensor:
        """Scores are phi(i - j) alone. Every key weighs e^(tail - m) (a prefix sum), plus a
        correction at the few distances where phi differs from the tail; m is the largest score
        query i sees, so the exponentials never overflow."""
        n = v.shape[2]
        window = self.phi.shape[1]
        i = torch.arange(n, device=v.device)
        reach = torch.arange(window, device=v.device)[None, :] <= i[:, None]  # (n, window)
        tail = self.phi_tail[:, None].expand(-1, n)
        m = tail.masked_fill(i[None, :] < window, float("-inf"))  # the tail is seen once i >= window
        if window:
            phi = self.phi[:, None, :].expand(-1, n, -1).masked_fill(~reach[None], float("-inf"))
            m = torch.maximum(m, phi.amax(dim=-1))
            plain = (self.phi == self.phi_tail[:, None])  # distances scored like the tail
            m = torch.where((plain[:, None, :] & reach[None]).any(dim=-1), torch.maximum(m, tail), m)
        base = torch.exp(tail - m)  # (heads, n)
        numerator = base[None, :, :, None] * torch.cumsum(v, dim=2)
        denominator = base * (i + 1).to(v.dtype)[None, :]
        denominator = denominator[None].expand(v.shape[0], -1, -1).clone()
        for h, d in torch.nonzero(self.phi != self.phi_tail[:, None]).tolist():
            if d >= n:
                continue  # no query is that far from a key yet
            extra = (torch.exp(self.phi[h, d] - m[h]) - base[h]).masked_fill(i < d, 0.0)  # (n,)
            numerator[:, h, d:] += extra[None, d:, None] * v[:, h, : n - d]
            denominator[:, h] += extra[None]
        return numerator / denominator[..., None]


class MLP(nn.Module):
    """One hidden layer; ``heaviside[u]`` selects H for unit u, otherwise ReLU."""

    heaviside: torch.Tensor

    def __init__(self, d_model: int, width: int) -> None:
        super().__init__()
        self.W_in = nn.Parameter(torch.zeros(d_model, width))
        self.b_in = nn.Parameter(torch.zeros(width))
        self.W_out = nn.Parameter(torch.zeros(width, d_model))
        self.b_out = nn.Parameter(torch.zeros(d_model))
        self.register_buffer("heaviside", torch.zeros(width, dtype=torch.bool))
        self._caches: dict[str, dict] = {"in": {}, "out": {}}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """What the MLP adds to the residual stream."""
        return scatter(x.shape, *self.delta(x))

    def delta(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        width = self.W_in.shape[1]
        if width == 0:
            return torch.zeros(0, dtype=torch.long, device=x.device), x[..., :0]
        z = scatter((*x.shape[:-1], width), *project(x, self.W_in, self._caches["in"])) + self.b_in
        hidden = torch.where(self.heaviside, (z > 0).to(z.dtype), torch.relu(z))
        columns, out = project(hidden, self.W_out, self._caches["out"])
        if bool((self.b_out != 0).any()):
            return torch.arange(x.shape[-1], device=x.device), scatter(x.shape, columns, out) + self.b_out
        return columns, out


class Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_head: int, window: int, width: int,
                 d_qk: int) -> None:
        super().__init__()
        self.attn = Attention(d_model, n_heads, d_head, window, d_qk)
        self.mlp = MLP(d_model, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = _add(x, *self.attn.delta(x))
        return _add(x, *self.mlp.delta(x))


if TYPE_CHECKING:
    class BlockList(nn.ModuleList):
        """The ``nn.ModuleList`` of a model's blocks, with its items typed as :class:`Block`."""

        def __iter__(self) -> Iterator[Block]: ...

        @overload
        def __getitem__(self, idx: slice) -> BlockList: ...

        @overload
        def __getitem__(self, idx: int) -> Block: ...

        def __getitem__(self, idx: int | slice) -> Block | BlockList: ...
else:
    BlockList = nn.ModuleList


def _add(x: torch.Tensor, columns: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """x plus values in the given columns (in place when no gradient is being recorded)."""
    if len(columns) == 0:
        return x
    if torch.is_grad_enabled() and (x.requires_grad or values.requires_grad):
        return x.index_add(-1, columns, values)
    x[..., columns] += values
    return x


class LimitTransformer(nn.Module):
    """Token and periodic positional embeddings, blocks, and a linear read-out of the outputs.

    ``forward(tokens, positions)`` takes token ids and absolute positions of shape (batch, n+1)
    whose column 0 is the beginning-of-sequence token, and returns the residual stream after
    the last block. :meth:`outputs` reads the program's outputs off it.
    """

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        d = spec.d_model
        widths = spec.mlp_widths or (0,) * spec.n_layers
        windows = spec.window or (0,) * spec.n_layers
        self.W_E = nn.Parameter(torch.zeros(len(spec.vocabulary), d))
        self.W_pos = nn.Parameter(torch.zeros(spec.period, d))
        self.blocks = BlockList(
            Block(d, len(heads), spec.d_head, window, width, spec.d_qk)
            for heads, window, width in zip(spec.heads, windows, widths)
        )
        self.W_U = nn.Parameter(torch.zeros(d, len(spec.outputs)))
        self._unembed_cache: dict = {}
        if self.W_U.device.type != "meta":
            self.to(torch_dtype(spec.dtype))

    def embed(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        if self.spec.wrap:
            rows = positions % self.spec.period
        else:
            if int(positions.max()) >= self.spec.period:
                raise ValueError(
                    f"position {int(positions.max())} is past the positional table's "
                    f"{self.spec.period} rows")
            rows = positions
        return _rows(self.W_E, tokens) + _rows(self.W_pos, rows)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens, positions).clone()
        for block in self.blocks:
            x = block(x)
        return x

    def residual_stream(self, tokens: torch.Tensor, positions: torch.Tensor) -> list[torch.Tensor]:
        """The residual after the embedding and after each attention and MLP sublayer."""
        x = self.embed(tokens, positions)
        states = [x]
        for block in self.blocks:
            x = x + block.attn(x)
            states.append(x)
            x = x + block.mlp(x)
            states.append(x)
        return states

    def outputs(self, residual: torch.Tensor) -> torch.Tensor:
        """The output Booleans (batch, n+1, outputs): each output's read-out is above 1/2."""
        return scatter((*residual.shape[:-1], self.W_U.shape[1]),
                       *project(residual, self.W_U, self._unembed_cache)) > 0.5

    def describe(self) -> str:
        """Layers, heads (with their phi support and what they read), MLP widths, residual labels
        and parameter counts, as text."""
        spec = self.spec
        lines = [
            f"Limit Transformer for {spec.source or 'a program'}: {spec.n_layers} layers, residual width "
            f"{spec.d_model}, {self.parameter_count():,} parameters ({self.nonzero_count():,} nonzero), "
            f"{spec.dtype}",
            f"  positions: {'periodic, period ' + str(spec.period) if spec.wrap else str(spec.period) + ' absolute rows'}",
        ]
        for layer, (heads, block) in enumerate(zip(spec.heads, self.blocks)):
            lines.append(f"  layer {layer}: {len(heads)} heads, MLP width {block.mlp.W_in.shape[1]}")
            for h, head in enumerate(heads):
                support = torch.nonzero(block.attn.phi[h].detach()).flatten().tolist()
                kind = "uniform (phi = 0)" if head.kind == "uniform" else f"offset {head.offset} (phi support {support})"
                reads = ", ".join(head.reads[:6]) + (f", ... ({len(head.reads)})" if len(head.reads) > 6 else "")
                lines.append(f"    head {h}: {kind}; reads {reads}")
        shown = ", ".join(spec.labels[:40]) + (f", ... ({spec.d_model} in all)" if spec.d_model > 40 else "")
        lines.append(f"  residual: {shown}")
        lines.append(f"  outputs: {', '.join(spec.outputs)}")
        return "\n".join(lines)

    def summary(self) -> dict:
        """What :meth:`describe` says, as JSON: the source, ``layers``, residual ``width``, parameter
        counts, dtype, the positional table (``period``, ``periodic``), per layer its heads (kind,
        offset, phi support, what they read) and MLP width, the residual labels and the outputs.

        >>> from crasp import check, library
        >>> from limit_transformer import compile
        >>> data = compile(check(library.load("dyck1"))).summary()
        >>> data["layers"], data["width"] == len(data["residual"]), data["outputs"]
        (2, True, ['accept'])
        """
        spec = self.spec
        blocks = []
        for heads, block in zip(spec.heads, self.blocks):
            blocks.append({"mlp_width": int(block.mlp.W_in.shape[1]), "heads": [
                {"kind": head.kind, "offset": head.offset, "reads": list(head.reads),
                 "phi_support": torch.nonzero(block.attn.phi[h].detach()).flatten().tolist()}
                for h, head in enumerate(heads)]})
        return {"source": spec.source, "layers": spec.n_layers, "width": spec.d_model,
                "parameters": self.parameter_count(), "nonzero_parameters": self.nonzero_count(), "dtype": spec.dtype,
                "period": spec.period, "periodic": spec.wrap, "blocks": blocks, "residual": list(spec.labels),
                "outputs": list(spec.outputs)}

    def _repr_html_(self) -> str:
        """The model in a notebook: its size, layers, heads and residual directions as tables."""
        from crasp.display import limit_transformer_html

        return limit_transformer_html(self)

    def attention_figure(self, tokens: str | list[str], *, layer: int | None = None, head: int | None = None,
                         offset: int = 0) -> Figure:
        """A matplotlib Figure of the attention pattern of every head on ``tokens`` (only those of
        ``layer``, and only head ``head`` of each layer, where given): one axes per head, queries
        as rows, keys as columns, position 0 the BOS token. Needs the ``plot`` extra.

        >>> from crasp import library
        >>> from limit_transformer import compile
        >>> figure = compile(library.load("dyck1")).attention_figure("( )", layer=1)
        >>> [axis.get_title() for axis in figure.axes]
        ['layer 1 head 0: uniform']
        """
        try:
            import matplotlib  # noqa: F401  (the optional 'plot' extra)
        except ImportError:
            raise ImportError("attention_figure needs matplotlib: pip install 'crasp-lengthgen[plot]'") from None
        from .plot import plot_attention

        return plot_attention(self, tokens, offset=offset, layer=layer, head=head)

    def parameter_count(self) -> int:
        """Parameters of the equivalent dense model (sparse weights count every entry)."""
        return sum(p.numel() for p in self.parameters())

    def nonzero_count(self) -> int:
        return sum(int(p._nnz()) if p.is_sparse else int(torch.count_nonzero(p)) for p in self.parameters())

    def with_empty_layers(self, count: int) -> "LimitTransformer":
        """A copy with ``count`` extra layers whose weights are all zero, appended at the end."""
        spec = self.spec
        extended = ModelSpec(**{
            **asdict(spec),
            "heads": spec.heads + ((),) * count,
            "mlp_widths": (spec.mlp_widths or (0,) * spec.n_layers) + (0,) * count,
            "margins": (spec.margins or ((),) * spec.n_layers) + ((),) * count,
            "window": (spec.window or (0,) * spec.n_layers) + (0,) * count,
        })
        extended = ModelSpec.from_json(extended.to_json())
        fresh = LimitTransformer(extended).to(self.W_E.device)
        state = {**fresh.state_dict(), **self.state_dict()}
        with torch.device("meta"):
            copy = LimitTransformer(extended)
        copy.load_state_dict(state, assign=True)
        return copy.eval().requires_grad_(False)
