"""The one object that holds every numeric setting of a compilation.

>>> config = CompileConfig(max_length=1000)
>>> round(config.bias, 1), config.unit_roundoff == 2.0**-53
(44.6, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from crasp.errors import CraspError

_UNIT_ROUNDOFF = {"float32": 2.0**-24, "float64": 2.0**-53}
_MANTISSA_BITS = {"float32": 24, "float64": 53}


class ConfigError(CraspError):
    """An impossible compilation setting."""


@dataclass(frozen=True)
class CompileConfig:
    """Numerics of a compiled model, derived from the longest input it must get right.

    ``max_length`` is the longest input (in tokens, the beginning-of-sequence token not counted)
    on which the compiler guarantees exact outputs in ``dtype``; the compiler refuses a program
    whose comparisons need finer margins than ``dtype`` has at that length. ``local_bias`` is
    phi at a local head's offset; by default it is chosen so that the other positions' total
    weight is below one unit roundoff at ``max_length`` (the construction is exact for any
    positive bias; a large one gives the comparison it feeds a margin of a whole count).

    The model is finite where the program is symbolic: its positional table has one row per
    residue of the program's period (the lcm of its moduli), and each local offset is a head
    with residual slots of its own and a bias table as wide as the farthest offset.
    ``max_period``, ``max_local_offsets`` and ``max_window`` bound these; the compiler computes
    all three before it builds anything and refuses a program beyond them (``crasp compile
    --max-period / --max-local-offsets / --max-window`` raise them).
    """

    max_length: int = 4096
    dtype: str = "float64"
    device: str = "cpu"
    local_bias: float | None = None
    max_period: int = 1 << 16
    max_local_offsets: int = 4096
    max_window: int = 1 << 16

    def __post_init__(self) -> None:
        if self.dtype not in _UNIT_ROUNDOFF:
            raise ConfigError(f"dtype must be float32 or float64, not {self.dtype!r}")
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ConfigError(f"device must be cpu or cuda, not {self.device!r}")
        limit = 2 ** _MANTISSA_BITS[self.dtype] - 2
        if not 1 <= self.max_length <= limit:
            raise ConfigError(
                f"max_length must be between 1 and {limit} in {self.dtype} (counts beyond that "
                f"are not exact integers), not {self.max_length}"
            )
        if self.max_period < 1 or self.max_local_offsets < 0 or self.max_window < 1:
            raise ConfigError("max_period and max_window must be >= 1, max_local_offsets >= 0")
        if self.local_bias is not None and not (0 < self.local_bias < 80):
            raise ConfigError(f"local_bias must be in (0, 80), not {self.local_bias}")

    @property
    def unit_roundoff(self) -> float:
        return _UNIT_ROUNDOFF[self.dtype]

    @property
    def bias(self) -> float:
        """phi at a local head's offset: e^-bias * (max_length + 1) is below a unit roundoff."""
        if self.local_bias is not None:
            return self.local_bias
        return math.log(self.max_length + 1) - math.log(self.unit_roundoff) + 1.0

    def length_limit(self, error_units: float) -> int:
        """The longest length at which a comparison with that rounding error keeps its sign.

        A comparison of counts with integer coefficients is decided on values divided by n + 1,
        shifted by half a unit: it keeps its sign while the rounding error (``error_units``
        unit roundoffs) stays below 1 / (2 (n + 1)).
        """
        return int(1.0 / (2.0 * error_units * self.unit_roundoff)) - 1
