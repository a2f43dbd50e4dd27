"""The catalogue of tasks: the built-in suite (assembled from its families on first use), plug-ins
declared as ``crasp.tasks`` entry points, and tasks registered at run time with :func:`task`.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Callable, Iterator, Sequence

import numpy as np

from crasp.ast import Program

from .types import Format, Labels, Task, TaskError

_REGISTRY: dict[str, Task] = {}


def register(task: Task, *, replace: bool = False) -> Task:
    """Add a task to the registry (``replace=True`` to overwrite one of the same name)."""
    if not task.name or not all(c.isalnum() or c in "_-*(){},." for c in task.name):
        raise TaskError(f"task name {task.name!r} must be non-empty, without spaces")
    if task.name in _REGISTRY and not replace:
        raise TaskError(f"a task named {task.name!r} is already registered")
    task.training_bin  # noqa: B018 - raises when no bin holds the training lengths
    _REGISTRY[task.name] = task
    return task


def task(
    name: str,
    *,
    symbols: Sequence[str],
    sampler: Callable[[int, np.random.Generator], Sequence[str]],
    format: Format | str = Format.SEQ2SEQ,
    outputs: Sequence[str] | None = None,
    valid: Callable[[tuple[str, ...]], bool] = lambda x: True,
    train_range: tuple[int, int] = (0, 50),
    bins: tuple[tuple[int, int], ...] = ((0, 50), (51, 100), (101, 150)),
    min_length: int = 1,
    labels: Labels = Labels(None, None),
    programs: dict[str, Callable[[], Program]] | None = None,
    no_program: dict[str, str] | None = None,
    description: str = "",
    batch: Callable[[np.ndarray], np.ndarray] | None = None,
    modulus: int | None = None,
    replace: bool = False,
) -> Callable:
    """Decorator: register a task whose reference is the decorated function.

    The function maps an input (a tuple of symbols) to the answer tokens (seq2seq), the tuple of
    legal-next sets (next-set) or the verdict (accept); ``sampler(length, rng)`` draws an input;
    ``batch`` is an optional vectorised reference and ``modulus`` the modulus of a modular answer
    (see :class:`Task`).

    >>> @task("demo_reverse", symbols=("a", "b"), replace=True,
    ...       sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
    ... def reverse(x):
    ...     return tuple(reversed(x))
    >>> __import__("tasks").get("demo_reverse").example(("a", "b")).tokens
    ('<bos>', 'a', 'b', '<sep>', 'b', 'a', '<eos>')
    """
    def wrap(reference: Callable) -> Callable:
        register(Task(
            name=name, family="user", format=Format(format), symbols=tuple(symbols),
            outputs=tuple(outputs if outputs is not None else symbols),
            sample_input=lambda n, rng: tuple(sampler(n, rng)), answer=reference, valid=valid,
            train_range=train_range, bins=bins, min_length=min_length, labels=labels,
            programs=dict(programs or {}), no_program=dict(no_program or {}),
            description=description or (reference.__doc__ or "").strip().split("\n")[0],
            reference=f"{reference.__module__}.{reference.__qualname__}", batch_answer=batch,
            modulus=modulus,
        ), replace=replace)
        return reference
    return wrap


def balanced(draw: Callable[[int, np.random.Generator], Sequence[str]], answer: Callable[[tuple[str, ...]], object],
             *, tries: int = 200) -> Callable[[int, np.random.Generator], tuple[str, ...]]:
    """A sampler that gives an accept task's two answers equally often, as far as ``draw`` finds
    them: half of the time its first draw, else a draw (at most ``tries``) whose answer differs
    from the first one's. Where ``draw`` alone gives one answer nearly always (a rare "accept"), a
    test of it is trivial: a model that answers the same whatever the input scores nearly 100%
    (docs/validation.md, the baseline).

    It keeps no state, so a generator seeded alike gives the same inputs (test sets stay the same
    from run to run). Where no other answer turns up in ``tries`` draws (none exists at that
    length, or it is very rare), the first draw is returned; with more than two answers, each is
    drawn at least as often as by ``draw`` alone when it is the rarer one, but not exactly equally.

    >>> import numpy as np
    >>> more_c = lambda x: x.count("c") > len(x) / 2
    >>> uniform = lambda n, rng: tuple(rng.choice(["a", "b", "c"], size=n))
    >>> sampler = balanced(uniform, more_c)
    >>> rng = np.random.default_rng(0)
    >>> share = sum(more_c(sampler(12, rng)) for _ in range(400)) / 400
    >>> 0.4 < share < 0.6, sum(more_c(uniform(12, rng)) for _ in range(400)) / 400 < 0.2
    (True, True)
    """
    if tries < 1:
        raise TaskError(f"balanced: tries={tries}, at least 1 is needed")

    def sample(n: int, rng: np.random.Generator) -> tuple[str, ...]:
        first = tuple(draw(n, rng))
        if rng.random() < 0.5:
            return first
        given = answer(first)
        for _ in range(tries):
            other = tuple(draw(n, rng))
            if answer(other) != given:
                return other
        return first

    return sample


def registered() -> dict[str, Task]:
    """The registered tasks by name, the built-in suite included (the live table: do not modify)."""
    _load_builtin()
    return _REGISTRY


def names(family: str | None = None) -> list[str]:
    """Names of registered tasks, in registration order."""
    _load_builtin()
    return [n for n, t in _REGISTRY.items() if family is None or t.family == family]


def all_tasks() -> Iterator[Task]:
    _load_builtin()
    yield from _REGISTRY.values()


_LOADED = False


def _load_builtin() -> None:
    """Register the built-in suite on first use (importing a module registers nothing)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from . import algorithmic, arithmetic, depth_languages, languages

        for builtin in [*algorithmic.builtin_tasks(), *languages.builtin_tasks(), *arithmetic.builtin_tasks(),
                        *depth_languages.builtin_tasks()]:
            register(builtin)
        for entry in entry_points(group="crasp.tasks"):
            # A plug-in's entry point names a Task, a list of Tasks, or a function returning them.
            loaded = entry.load()
            loaded = loaded() if callable(loaded) and not isinstance(loaded, Task) else loaded
            for item in [loaded] if isinstance(loaded, Task) else loaded:
                register(item, replace=True)
