"""Which device a run trains on, and what it lets the device do.

>>> device_name("cpu"), resolve_device("cpu")
('cpu', device(type='cpu'))
"""

from __future__ import annotations

import torch

from validation.config import ValidationError


def device_name(name: str) -> str:
    """``auto`` as this machine has it: ``cuda`` where torch sees a GPU, else ``cpu``; any other
    name as given.

    >>> device_name("cuda:1"), device_name("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    ('cuda:1', True)
    """
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def resolve_device(name: str) -> torch.device:
    """"cpu", "cuda" or "cuda:N" ("auto": :func:`device_name`); an unavailable GPU asked for by
    name is an error, not a silent fallback."""
    try:
        device = torch.device(device_name(name))
    except RuntimeError:
        raise ValidationError(f"device {name!r}: expected auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValidationError(f"device {name!r}: no CUDA GPU is available here (use --device cpu)")
    if device.type not in ("cpu", "cuda"):
        raise ValidationError(f"device {name!r}: expected auto, cpu, cuda or cuda:N")
    return device


def use_tensor_cores(device: str) -> None:
    """On a GPU, let float32 matrix products use TF32 tensor cores (float32 range, a 10-bit mantissa
    in the products, float32 sums), as GPU training scripts commonly do: several times faster at the
    paper presets' widths. Only the commands set it; the library leaves torch's setting alone."""
    if device.startswith("cuda"):
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
