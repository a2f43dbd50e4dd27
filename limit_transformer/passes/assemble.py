"""Pass 5, assembly: the emitted weights as a torch :class:`~limit_transformer.model.LimitTransformer`.

Takes :class:`~limit_transformer.passes.weights.Weights` and a device and gives the model in
eval mode without gradients, its parameters loaded as dense tensors or, for a
:class:`~limit_transformer.passes.weights.SparseArray`, as coalesced sparse COO tensors.
"""

from __future__ import annotations

import numpy as np
import torch

from ..model import LimitTransformer, module_name, torch_dtype
from .weights import SparseArray, Weights


def to_tensor(array: np.ndarray | SparseArray, dtype: torch.dtype, device: str) -> torch.Tensor:
    """A dense tensor, or a coalesced sparse COO tensor for a :class:`SparseArray`."""
    if isinstance(array, SparseArray):
        return torch.sparse_coo_tensor(torch.from_numpy(array.indices), torch.from_numpy(array.values),
                                       array.shape, dtype=dtype, device=device,
                                       check_invariants=False).coalesce()  # indices are our own
    return torch.from_numpy(array).to(device=device, dtype=dtype)


def assemble(weights: Weights, device: str = "cpu") -> LimitTransformer:
    """Pass 5: the torch module holding the weights."""
    with torch.device("meta"):
        model = LimitTransformer(weights.spec)
    dtype = torch_dtype(weights.spec.dtype)
    state = {module_name(k): to_tensor(v, dtype, device) for k, v in weights.arrays.items()}
    for layer, mask in enumerate(weights.heaviside):
        state[f"blocks.{layer}.mlp.heaviside"] = torch.from_numpy(mask).to(device)
    model.load_state_dict(state, assign=True)
    return model.eval().requires_grad_(False)
