"""Save and load models: weights in safetensors, everything else in a JSON config beside them.

Weight names follow TransformerLens where they apply (``embed.W_E``, ``pos_embed.W_pos``,
``blocks.{l}.attn.W_Q|W_K|W_V|W_O``, ``blocks.{l}.mlp.W_in|b_in|W_out|b_out``, ``unembed.W_U``);
the Limit Transformer's own are ``blocks.{l}.attn.phi``, ``blocks.{l}.attn.phi_tail`` and
``blocks.{l}.mlp.heaviside``. A sparse weight is stored as ``NAME.indices`` and ``NAME.values``
with its shape in the config.

>>> import tempfile, pathlib
>>> from crasp import parse
>>> from limit_transformer import compile
>>> model = compile(parse('A = #"a" > #"b"'))
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> paths = save(model, folder / "majority")
>>> sorted(p.name for p in paths)
['majority.json', 'majority.safetensors']
>>> load(folder / "majority").spec == model.spec
True
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from crasp.errors import CraspError

from .model import LimitTransformer, ModelSpec, lens_name, module_name
from .lens import to_transformer_lens  # noqa: F401  (re-exported: the TransformerLens export)

FORMAT = "crasp-limit-transformer"
VERSION = 1


class ExportError(CraspError):
    """A model file that is missing, corrupted or of another format."""


def _paths(path: str | Path) -> tuple[Path, Path]:
    stem = Path(path)
    if stem.suffix in (".safetensors", ".json"):
        stem = stem.with_suffix("")
    return stem.with_suffix(".safetensors"), stem.with_suffix(".json")


def save(model: LimitTransformer, path: str | Path) -> tuple[Path, Path]:
    """Write ``PATH.safetensors`` and ``PATH.json``; returns both paths."""
    from safetensors.torch import save_file

    weights, config = _paths(path)
    tensors, sparse = {}, {}
    for name, tensor in model.state_dict().items():
        name = lens_name(name)
        tensor = tensor.detach().cpu()
        if tensor.is_sparse:
            tensor = tensor.coalesce()
            tensors[f"{name}.indices"] = tensor.indices().contiguous()
            tensors[f"{name}.values"] = tensor.values().contiguous()
            sparse[name] = list(tensor.shape)
        else:
            tensors[name] = tensor.contiguous()
    weights.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(weights), metadata={"format": FORMAT})
    config.write_text(json.dumps({"format": FORMAT, "version": VERSION, "sparse": sparse,
                                  "spec": json.loads(model.spec.to_json())}, indent=1))
    return weights, config


def load(path: str | Path, device: str = "cpu") -> LimitTransformer:
    """Read a model written by :func:`save`."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    weights, config = _paths(path)
    for file in (weights, config):
        if not file.exists():
            raise ExportError(f"{file}: no such file (a saved model is a .safetensors and a .json)")
    try:
        meta = json.loads(config.read_text())
        if meta.get("format") != FORMAT:
            raise ExportError(f"{config}: not a {FORMAT} config (format {meta.get('format')!r})")
        if meta.get("version") != VERSION:
            raise ExportError(f"{config}: version {meta.get('version')!r}, this toolkit reads {VERSION}")
        spec = ModelSpec.from_json(json.dumps(meta["spec"]))
    except (ValueError, KeyError, TypeError) as error:
        raise ExportError(f"{config}: corrupted model config ({error})") from None
    try:
        tensors = load_file(str(weights), device=device)
    except (SafetensorError, OSError, ValueError) as error:
        raise ExportError(f"{weights}: corrupted weights ({error})") from None
    state = {}
    for name, shape in meta["sparse"].items():
        try:
            indices, values = tensors.pop(f"{name}.indices"), tensors.pop(f"{name}.values")
        except KeyError:
            raise ExportError(f"{weights}: sparse weight {name} is missing its entries") from None
        try:  # indices read from a file are checked, so a corrupted file cannot crash torch
            state[module_name(name)] = torch.sparse_coo_tensor(
                indices, values, shape, check_invariants=True).coalesce()
        except RuntimeError as error:
            raise ExportError(f"{weights}: sparse weight {name} is corrupted ({str(error)[:200]})") from None
    state.update({module_name(k): v for k, v in tensors.items()})
    with torch.device("meta"):
        model = LimitTransformer(spec)
    try:
        model.load_state_dict(state, assign=True)
    except RuntimeError as error:
        raise ExportError(f"{weights}: weights do not match the config ({str(error)[:300]})") from None
    return model.eval().requires_grad_(False)
