"""The synthesis loop: rounds of widening ranges, each an enumeration on a batch; a program that
matches goes to the verifier, and its counterexample joins the batch."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from crasp import ast
from crasp.checker import CheckedProgram, check

from ..verify import Report, verify
from .assembly import assemble, canonical, expressions, program_size
from .atoms import bears_on, complement_atom, evaluate, format_atoms, found_atom, relation_atoms
from .config import SynthesisConfig, SynthesisResult, schedule
from .evaluator import Batch
from .examples import alphabet_of, format_of, initial_examples, output_names, targets
from .search import Search, Stats

INITIAL_SHARE = 0.2
"""The share of the time limit the search may spend enumerating its first inputs."""


# ---------------------------------------------------------------- the loop


def synthesize(task, config: SynthesisConfig = SynthesisConfig(),
               progress: Callable[[str], None] | None = None,
               final: Callable[[CheckedProgram], Report] | None = None) -> SynthesisResult:
    """Search for a C-RASP program of ``task`` (a :class:`tasks.registry.Task`) within ``config``.

    Returns a :class:`SynthesisResult`; its ``program`` passed :func:`crasp.checker.check` and
    :func:`tasks.verify.verify` (None when nothing was found within the budget: ``searched`` says
    what was tried). ``progress`` receives a line at least every ``config.progress_every`` seconds.
    ``final``, where given, is the verification a program that passed the quick one must pass (a
    caller's own, which it then need not repeat: its report is ``result.report``); by default,
    :func:`tasks.verify.verify` with the config's ``verify_*`` budget.
    """
    started = time.perf_counter()
    stats = Stats(started=started, last_report=started)
    rng = np.random.default_rng(config.seed)
    examples = initial_examples(task, config, rng, started + INITIAL_SHARE * config.time_limit)
    rounds = schedule(config)
    plain = config.plain
    log: list[str] = []
    counterexamples = 0
    reached = 0
    say = progress or (lambda line: None)

    def searched(outcome: str) -> str:
        batch = f"{len(examples)} inputs, {sum(len(e.tokens) for e, _ in examples)} positions"
        return (f"expressions up to size {config.max_size} ({config.positions.upper()}); "
                + "; ".join(log) + f"; batch {batch} ({counterexamples} counterexamples); "
                f"{stats.candidates:,} candidates, {stats.classes:,} classes in "
                f"{time.perf_counter() - started:.1f} s of {config.time_limit:g} s; {outcome}")

    base_atoms = format_atoms(task) if config.format_atoms else ()
    relations = relation_atoms(task) if config.relation_atoms else ()
    exclusive = format_of(task) == "seq2seq"  # exactly one output holds where one is checked
    # outputs matched on the batch by earlier searches of it: their expression and search size
    found: dict[str, tuple[ast.Expr, int]] = {}
    batch: Batch | None = None  # built again only when a counterexample joins the examples
    round_ = 0
    while round_ < len(rounds):
        ranges, share = rounds[round_]
        deadline = started + config.time_limit * share
        if batch is None:
            alphabet = alphabet_of(task, examples)
            batch = Batch(examples, alphabet, config.seed + counterexamples)
            base_values = evaluate([*base_atoms, *relations], batch)
        outputs = targets(task, batch, output_names(task, examples))
        still = [o for o in outputs if o.name not in found]
        seeded = [*zip(base_atoms, base_values), *((atom, values) for atom, values in
                  zip(relations, base_values[len(base_atoms):]) if bears_on(values, still))]
        more = [found_atom(name, expr) for name, (expr, _) in found.items()]
        if exclusive and found and len(still) == 1:
            more.append(complement_atom([expr for expr, _ in found.values()]))
        atoms = [*(atom for atom, _ in seeded), *more]
        label = f"round {round_ + 1}/{len(rounds)}"
        say(f"{label}: {ranges.describe(plain)}; batch of {len(examples)} inputs ({batch.width} positions), "
            f"{len(still)} output{'s' if len(still) > 1 else ''} to find, {len(atoms)} atom{'s' if len(atoms) != 1 else ''}")
        search = Search(batch, still, ranges, config, stats, deadline, progress, label,
                        atoms=list(zip(atoms, [*(values for _, values in seeded), *evaluate(more, batch)])))
        enumeration_started = time.perf_counter()
        solved = search.run(one_at_a_time=config.output_by_output and len(still) > 1)
        stats.enumerating += time.perf_counter() - enumeration_started
        reached = max(reached, search.size)
        solved_now = [o for o in still if o.solution is not None]
        for output, (name, expr) in zip(solved_now, expressions(solved_now, search.nodes, atoms)):
            assert output.size is not None  # set with its solution
            found[name] = (expr, output.size)
        if search.progressed:
            say(f"{label}: found next {', '.join(repr(o.name) for o in solved_now)}; "
                "searching the others with it among the atoms")
            continue
        done = f"complete to size {search.complete}" if search.complete else "no size complete"
        if not solved and search.size > search.complete:
            done += f", size {search.size} in part"
        if search.full:
            done += " (class store full: larger sizes partial)"
        entry = f"round {round_ + 1} [{ranges.describe(plain)}]: {done}"
        if not solved:
            log.append(entry)
            if search.timed_out and round_ == len(rounds) - 1:
                break
            round_ += 1
            continue
        program = assemble(task, [(o.name, found[o.name][0]) for o in outputs], alphabet, atoms)
        checked = check(program)
        if plain and not checked.info.plain:  # pragma: no cover - NoPE rounds have no positional leaves
            raise AssertionError("a NoPE search produced a positional program")
        report = verify(task, checked, exhaustive_budget=2000, samples=30, max_length=60,
                        random_offsets=1, seed=config.seed + counterexamples)
        if report.ok:
            report = final(checked) if final else verify(
                task, checked, samples=config.verify_samples, max_length=config.verify_max_length,
                exhaustive_budget=config.verify_exhaustive, seed=config.seed)
        if report.ok:
            log.append(entry.replace(done, f"found at size {max(size for _, size in found.values())}"))
            program, text = canonical(program)
            say(f"{label}: found a program of size {program_size(program)}; verified")
            return SynthesisResult(
                program=program, size=program_size(program), candidates=stats.candidates, classes=stats.classes,
                seconds=time.perf_counter() - started, max_size_reached=reached, checks=report.summary(),
                searched=searched("found"), text=text, counterexamples=counterexamples,
                enumeration_seconds=stats.enumerating, report=report, checked=checked,
            )
        bad = report.counterexample
        assert bad is not None  # the report is not ok
        key = (bad.example.tokens, bad.offset)
        if any((e.tokens, o) == key for e, o in examples):  # pragma: no cover - the batch already agreed
            raise AssertionError(f"the verifier's counterexample is already in the batch: {bad.describe()}")
        examples.append((bad.example, bad.offset))
        counterexamples += 1
        found.clear()
        batch = None
        say(f"{label}: counterexample {counterexamples} (length {len(bad.example.tokens)}, offset {bad.offset}); "
            "restarting with it in the batch")
        if time.perf_counter() > deadline:
            log.append(entry)
            round_ += 1
    return SynthesisResult(
        program=None, size=None, candidates=stats.candidates, classes=stats.classes,
        seconds=time.perf_counter() - started, max_size_reached=reached,
        checks="no program found, nothing verified", searched=searched("nothing found"),
        counterexamples=counterexamples, enumeration_seconds=stats.enumerating,
    )
