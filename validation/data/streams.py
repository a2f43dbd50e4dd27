"""Where a run's examples come from on the host: the fixed test sets per length bin (offset 0,
the same for every run), and each seed's stream of training examples drawn by the task's own
samplers (the reference every faster sampler is tested against).

>>> from tasks import registry
>>> stream = TrainingStream(registry.get("bin_majority"), seed=0)
>>> len(stream.next(3)), [len(s) for s in held_out_sets(registry.get("bin_majority"), 2)]
(3, [2, 2, 2])
"""

from __future__ import annotations

import numpy as np

from tasks.evidence.reference import check_reference
from tasks.registry import Example, Task


def held_out_sets(task: Task, size: int, seed: int = 0) -> list[list[Example]]:
    """``size`` examples per length bin (offset 0), the same for every run that uses ``seed``; the
    task's reference is checked first (once per task object)."""
    check_reference(task)
    rng = np.random.default_rng([seed, 7])
    return [task.sample_bin(low, high, size, rng) for low, high in task.bins]


def fixed_training_set(task: Task, size: int, seed: int) -> list[Example]:
    """Seed ``seed``'s ``size`` training examples (offset 0), without duplicate inputs where the
    published protocol drops them."""
    rng = np.random.default_rng([seed, 2])
    unique = task.dataset.unique if task.dataset else False
    drawn: dict[tuple[str, ...], Example] = {}
    examples: list[Example] = []
    for _ in range(100):
        for example in task.sample_bin(*task.train_range, size, rng):
            if not unique:
                examples.append(example)
            elif example.tokens not in drawn:
                drawn[example.tokens] = example
        examples = examples if not unique else list(drawn.values())
        if len(examples) >= size:
            return examples[:size]
    return examples  # fewer distinct inputs exist than asked for: train on all of them


class TrainingStream:
    """Training examples for one seed, drawn on the fly (or from a fixed set, shuffled per epoch,
    for the formal-language protocol). Its state is a numpy generator state, saved in checkpoints.
    """

    def __init__(self, task: Task, seed: int, fixed_size: int | None = None) -> None:
        check_reference(task)  # training data are the reference's answers: check it (once per task object)
        self.task = task
        self.rng = np.random.default_rng([seed, 1])
        self.fixed: list[Example] | None = None
        self.order: list[int] = []
        if fixed_size:
            self.fixed = fixed_training_set(task, fixed_size, seed)

    def next(self, count: int) -> list[Example]:
        if self.fixed is None:
            return [self.task.sample_train(self.rng) for _ in range(count)]
        chosen: list[Example] = []
        while len(chosen) < count:
            if not self.order:
                self.order = list(self.rng.permutation(len(self.fixed)))
            example = self.fixed[self.order.pop()]
            chosen.append(Example(example.tokens, example.checked, example.targets, example.length,
                                  int(self.task.train_offset(example, self.rng))))
        return chosen

    def state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "order": [int(k) for k in self.order]}

    def restore(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.order = list(state["order"])
