"""Pass 1b, dead-slot elimination: the lowered form cut down to what some output depends on.

Takes a :class:`~limit_transformer.passes.lowered.Lowered` and gives another whose slots are
only those an output reads (directly or through heads and units), renumbered densely, with the
heads and units that fill dropped slots removed.
"""

from __future__ import annotations

from .lowered import Lowered, Mlp, Operation, Read, Unit


def eliminate_dead_slots(lowered: Lowered) -> Lowered:
    """Pass 1b: drop slots no output depends on, with the heads and units that fill them."""
    live = {slot for _, slot in lowered.outputs if slot is not None}
    kept: list[Operation] = []
    for operation in reversed(lowered.operations):
        if isinstance(operation, Read):
            if operation.target in live:
                live.add(operation.source)
                kept.append(operation)
            continue
        units = []
        for unit in operation.units:
            outputs = tuple((s, c) for s, c in unit.outputs if s in live)
            if outputs:
                units.append(Unit(unit.inputs, unit.bias, unit.activation, outputs, unit.margin))
                live.update(s for s, _ in unit.inputs)
        if units:
            kept.append(Mlp(tuple(units), operation.label))
    order = sorted(live)
    index = {old: new for new, old in enumerate(order)}

    def moved(pairs):
        return tuple((index[s], c) for s, c in pairs)

    operations = tuple(
        Read(index[op.source], index[op.target], op.offset) if isinstance(op, Read) else
        Mlp(tuple(Unit(moved(u.inputs), u.bias, u.activation, moved(u.outputs), u.margin)
                  for u in op.units), op.label)
        for op in reversed(kept)
    )
    return Lowered(
        labels=tuple(lowered.labels[s] for s in order),
        token_slots={t: tuple(index[s] for s in slots if s in index)
                     for t, slots in lowered.token_slots.items()},
        position_slots=tuple(tuple(index[s] for s in slots if s in index)
                             for slots in lowered.position_slots),
        operations=operations,
        outputs=tuple((name, None if s is None else index[s]) for name, s in lowered.outputs),
        output_kind=lowered.output_kind,
        period=lowered.period,
        source=lowered.source,
    )
