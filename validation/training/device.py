"""Which device a run trains on, and what it lets the device do.

>>> device_name("cpu"), resolve_device("cpu")
('cpu', device(type='cpu'))
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

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


def set_matmul_precision(precision: str, device: torch.device) -> None:
    """On a GPU, let float32 matrix products use TF32 tensor cores (float32 range, a 10-bit mantissa
    in the products, float32 sums) for ``tf32`` and ``bf16`` runs (the weights, gradients and
    optimizer of ``bf16`` are float32 too), and keep them exact float32 for ``fp32``. The switch
    is torch's, for the whole process: groups trained side by side must share a precision.
    A CPU has no TF32: there nothing changes."""
    if device.type == "cuda":
        allowed = precision != "fp32"
        torch.backends.cuda.matmul.allow_tf32 = allowed
        torch.backends.cudnn.allow_tf32 = allowed


def autocast(precision: str, device: torch.device):
    """The context a forward pass runs in: bfloat16 autocast for ``bf16`` (its weight-cast cache off,
    as CUDA graphs want), nothing otherwise.

    >>> with autocast("bf16", torch.device("cpu")):
    ...     (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
    torch.bfloat16
    """
    if precision != "bf16":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16, cache_enabled=False)


@dataclass(frozen=True)
class Machine:
    """Where and how a command's groups train: the device (``auto``, ``cpu``, ``cuda``, ``cuda:N``),
    the way each step is taken (``step``, see :func:`validation.training.group.stepping`), and the
    moment to stop at, saved, for a later command to resume (``deadline``, a ``time.time()`` value,
    which other processes and machines of a sweep read alike; None: none). None of these is part of
    a run's key.

    >>> Machine.of("cpu") == Machine("cpu"), Machine.of(Machine("cuda", step="eager")).step
    (True, 'eager')
    """

    device: str = "cpu"
    step: str | None = None
    deadline: float | None = None

    @classmethod
    def of(cls, where: "str | Machine") -> "Machine":
        """``where`` as a machine (a device's name: that device, the other settings their defaults)."""
        return where if isinstance(where, Machine) else cls(where)
