"""Read PERIODIC and LOCAL off a model's weights.

PERIODIC: the positional vectors repeat, p_i = p_(i + period). LOCAL: every head's positional
bias phi(i - j) is zero beyond a finite offset tau. :func:`check_properties` returns both, or
raises :class:`PropertyViolation` naming the weight that breaks one.

>>> from crasp import parse
>>> from limit_transformer import compile
>>> check_properties(compile(parse('A = #[i - j in {2}] "a" > 0 && i mod 3 in {0}')))
Properties(period=3, tau=2, layers=1, heads=2)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from crasp.errors import CraspError

from .model import LimitTransformer, dense


class PropertyViolation(CraspError):
    """A model that is not a Limit Transformer satisfying PERIODIC and LOCAL."""


@dataclass(frozen=True)
class Properties:
    period: int
    """The least period of the positional vectors."""
    tau: int
    """The largest i - j at which some head's phi is nonzero (-1: no positional bias at all)."""
    layers: int
    heads: int


def least_period(table: torch.Tensor) -> int:
    """The least p dividing the number of rows with row r equal to row r mod p for every r."""
    rows = table.shape[0]
    for p in range(1, rows + 1):
        if rows % p == 0 and torch.equal(table, table[:p].repeat(rows // p, 1)):
            return p
    return rows  # pragma: no cover (p = rows always matches)


def check_properties(model: LimitTransformer) -> Properties:
    """PERIODIC and LOCAL as read from the weights; raises PropertyViolation if either fails."""
    table = dense(model.W_pos)
    if not model.spec.wrap:
        raise PropertyViolation(
            f"the positional table has {table.shape[0]} rows indexed by absolute position, not by "
            "position modulo a period: PERIODIC fails (an APE transformer, not a Limit Transformer)")
    for name, weight in model.named_parameters():
        if not bool(torch.isfinite(dense(weight)).all()):
            raise PropertyViolation(f"{name} has entries that are not finite numbers")
    tau, heads = -1, 0
    for layer, block in enumerate(model.blocks):
        attn = block.attn
        heads += attn.n_heads
        for h in range(attn.n_heads):
            tail = float(attn.phi_tail[h])
            if tail != 0.0:
                raise PropertyViolation(
                    f"layer {layer} head {h}: phi(i - j) = {tail:g} for every i - j >= "
                    f"{attn.phi.shape[1]}, an infinite support: LOCAL fails")
            support = torch.nonzero(attn.phi[h].detach()).flatten()
            if len(support):
                tau = max(tau, int(support.max()))
    return Properties(least_period(table), tau, len(model.blocks), heads)
