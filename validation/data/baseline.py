"""The best constant answer: what a model that ignores its input scores on a test set.

The harness counts an example when every checked position is right under teacher forcing
(:meth:`validation.training.group.SeedGroup.exact`). A model that ignores the input can still
answer by position: the k-th checked position gets the same answer in every example. The best such
answer is a path through the trie of the examples' target sequences: an example counts when its
whole target sequence lies on the path, so the best path is the one on which the most sequences
end. For an accept task (one checked position) this is the majority verdict; for a one-token
answer, the most common answer; for a sequence, the best run of answers position by position.

A row whose accuracy is no better than this says nothing about what the model learned: the
report calls it trivial where the constant answer already passes (the sampler) and not learned
where it does not (the model); ``crasp validate`` warns before training when one answer covers
:data:`TRIVIAL_SHARE` of a bin.

>>> from tasks.types import Example
>>> accept = [Example(("a",), (0,), (v,), 1) for v in (True, True, False, True)]
>>> best_constant(accept)
0.75
>>> words = [Example((), (0, 1), t, 2) for t in (("x", "y"), ("x", "z"), ("x", "y"))]
>>> best_constant(words)  # "x" then "y": two of three
0.6666666666666666
"""

from __future__ import annotations

from typing import Hashable, Sequence

from tasks.types import Example, Task

TRIVIAL_SHARE = 0.9
"""A bin on which one constant answer is right this often makes a trivial test: validate warns."""


def best_constant(examples: Sequence[Example]) -> float:
    """The share of ``examples`` that the best position-wise constant answer gets exactly right.

    Examples whose target sequences are prefixes of each other can share one answer: the answer
    ("x", "y") is right on an example whose targets are ("x",) as well.

    >>> from tasks.types import Example
    >>> best_constant([Example((), (0,), ("x",), 1), Example((), (0, 1), ("x", "y"), 2),
    ...                Example((), (0,), ("z",), 1)])
    0.6666666666666666
    """
    if not examples:
        raise ValueError("no examples: the best constant answer of an empty test set is undefined")
    children: list[dict[Hashable, int]] = [{}]
    ending = [0]
    for example in examples:
        node = 0
        for target in example.targets:
            child = children[node].get(target)
            if child is None:
                child = len(children)
                children[node][target] = child
                children.append({})
                ending.append(0)
            node = child
        ending[node] += 1
    best = list(ending)
    for node in range(len(children) - 1, -1, -1):  # a child is numbered after its parent
        best[node] = ending[node] + max((best[c] for c in children[node].values()), default=0)
    return best[0] / len(examples)


def baselines(task: Task, size: int, seed: int = 0) -> tuple[float, ...]:
    """Per length bin of ``task``, the best constant answer's accuracy on the test sets a run of
    ``size`` inputs per bin draws (:func:`validation.data.streams.held_out_sets` with ``seed``).

    >>> from tasks import registry
    >>> [round(b, 2) for b in baselines(registry.get("bin_majority"), 200)]
    [0.52, 0.53, 0.5]
    """
    from validation.data.streams import held_out_sets

    return tuple(best_constant(examples) for examples in held_out_sets(task, size, seed))


def trivial_bins(task: Task, values: Sequence[float], share: float = TRIVIAL_SHARE) -> list[tuple[tuple[int, int], float]]:
    """The bins of ``task`` on which one answer is right at least ``share`` of the time (``values``:
    the bins' best constant answers), each with its value.

    >>> from tasks import registry
    >>> trivial_bins(registry.get("parity"), (0.5, 0.93, 1.0))
    [((51, 100), 0.93), ((101, 150), 1.0)]
    """
    return [((b[0], b[1]), value) for b, value in zip(task.bins, values) if value >= share]


__all__ = ["TRIVIAL_SHARE", "best_constant", "baselines", "trivial_bins"]
