"""The demo behind ``crasp demo``: a short, real run of the toolkit on embedded defaults.

It lives in the top layer because it shows every package: programs (crasp), compiled models
(limit_transformer), tasks and predictions (tasks) and training (validation).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from crasp import builder, library
from crasp.checker import check
from crasp.interpreter import run
from crasp.printer import format_program
from crasp.trace import trace, write_traces

if TYPE_CHECKING:
    from crasp.checker import CheckedProgram
    from tasks.predict import Prediction
    from tasks.synthesis import SynthesisResult


_SAMPLES = {
    "dyck1": ["( ( ) ( ) )", "( ) ) (", "( ( )"],
    "anbncn": ["a a b b c c", "a b b c", "a b c a b c"],
    "contains_ab": ["b b a b", "b a a", "a a a b"],
    "aa_star": ["a a a a", "a a a", "a b"],
}


def majority_program(alphabet: list[str]):
    """next(t) holds where t is strictly the most frequent symbol so far, for any alphabet."""
    b = builder.ProgramBuilder(source=f"<majority over {len(alphabet)} symbols>")
    counts = {t: b.let(f"C{k}", builder.count(builder.tok(t))) for k, t in enumerate(alphabet)}
    for t in alphabet:
        b.next(t, builder.all_of(counts[t] > counts[u] for u in alphabet if u != t))
    return b.build()


def _verify_tasks(say) -> None:
    try:
        import tasks
        from tasks.verify import default_exhaustive, verify
    except ImportError:  # pragma: no cover - crasp installed without the task suite
        say("(the tasks package is not installed)")
        return
    # Every algorithmic task and formal language; three arithmetic tasks (the rest: `crasp verify`).
    chosen = [*tasks.names("algorithmic"), *tasks.names("formal"),
              "xu_addition", "xu_mod100_addition", "xu_mod101_addition", "duan_successor"]
    for name in chosen:
        task = tasks.get(name)
        small = {"exhaustive_length": 1, "samples": 3} if task.family == "arithmetic" else \
            {"exhaustive_length": min(8, default_exhaustive(task)[0]) if task.family == "formal" else None,
             "samples": 10, "max_length": 120}
        for variant in ("ape", "nope"):
            if task.programs.get(variant) is None:
                say(f"{name[:26]:26s} {variant:4s} no program ({task.no_program[variant].split(':')[0]})")
                continue
            report = verify(task, scheme=variant, **small)
            say(f"{name[:26]:26s} {variant:4s} {'PASS' if report.ok else 'FAIL'}  {report.checks:7d} checks "
                f"({report.exhaustive_inputs} exhaustive inputs, {report.sampled_inputs} sampled)")


def _compile_library(say) -> None:
    try:
        from limit_transformer import check_properties, compile
        from limit_transformer.agreement import verify
    except ImportError:  # pragma: no cover - crasp installed without the compiler
        say("(the limit_transformer package is not installed)")
        return
    for name in _SAMPLES:
        checked = check(library.load(name))
        model = compile(checked)
        properties = check_properties(model)
        report = verify(model, checked, max_length=1000, count=50)
        say(f"{name:12s} {model.spec.n_layers} layers, {sum(map(len, model.spec.heads))} heads, "
            f"width {model.spec.d_model}, period {properties.period}, tau {properties.tau}: "
            f"{report.summary()}")


def _predict_tasks(say) -> None:
    """`crasp predict --all`: the whole suite at the default budget, in parallel processes (kept in
    the per-user cache, so a second demo reads them back), beside the paper's labels."""
    try:
        import tasks
        from tasks.batch import predict_named
        from tasks.findings import DEFAULT
        from tasks.predict_cli import agreement
    except ImportError:  # pragma: no cover - crasp installed without the task suite
        say("(the tasks package is not installed)")
        return
    names = tasks.names()
    found = []
    for name, result in zip(names, predict_named(names, budget=DEFAULT)):
        if isinstance(result, tasks.TaskError):
            say(f"{name}: {result}")
        else:
            found.append(result)
    shown = {*tasks.names("algorithmic")[:8], "aa_star", "tomita_3", "d_4", "tomita_4", "xu_mod100_addition",
             "xu_mod150_addition", "duan_successor", "sabbaghi_addition", "L5"}
    for prediction in found:
        if prediction.task not in shown:
            continue
        ape, nope = (f"{v.verdict.value} ({v.basis}{', ' + v.strength.value if v.strength else ''})"
                     for v in (prediction.ape, prediction.nope))
        compared = ", ".join(prediction.comparison().values()) or "-"
        say(f"{prediction.task[:22]:22s} APE {ape:42s} NoPE {nope:42s} paper: {compared}")
    say(f"({len(found) - len(shown)} more tasks in `crasp predict --all`)")
    say(agreement(found))


DEMO_TASKS = ("bin_majority", "parity")
"""Tasks the demo trains under the cpu preset (a few minutes on 2 cores)."""


DEMO_SEEDS = 2
"""Seeds per task the demo trains (fewer than the cpu preset counts, to stay within minutes)."""


@dataclass(frozen=True)
class NewTasks:
    """What the demo finds on tasks the suite does not have: predictions for a Python function and
    two regular expressions, the program built from a certificate checked against its compiled
    model, and a program found by search from a reference alone."""

    divisible: Prediction  # of "#a divisible by 3"
    language: Prediction  # of (ab|ba)* over {a, b}
    built: CheckedProgram  # the checked program of (ab|ba)*, from its certificate
    compiled_agrees: bool
    hard: Prediction  # of (ab|bba)* over {a, b}
    found: SynthesisResult  # tomita_1's program, searched from its reference alone


def new_tasks() -> NewTasks:
    """Run the demo's new-task section (about 20 s, most of it the synthesis)."""
    import tasks
    from limit_transformer import compile as compile_program
    from limit_transformer.agreement import verify as verify_compiled
    from tasks.predict import predict
    from tasks.regular import from_regex, program_for, regex_task
    from tasks.synthesis import SynthesisConfig, synthesize

    divisible = tasks.Task(
        name="demo_a_count_div3", family="user", format=tasks.Format.ACCEPT, symbols=("a", "b"), outputs=(),
        sample_input=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)), answer=lambda x: x.count("a") % 3 == 0,
        valid=lambda x: True, train_range=(0, 50), bins=((0, 50), (51, 100)), separator=None)
    built = check(program_for(from_regex("(ab|ba)*", "ab"), end="<eos>"))
    report = verify_compiled(compile_program(built), built, max_length=200, count=20)
    return NewTasks(
        divisible=predict(divisible, quick=True, synthesis=False),
        language=predict(regex_task("(ab|ba)*", "ab"), quick=True, synthesis=False),
        built=built, compiled_agrees=report.ok,
        hard=predict(regex_task("(ab|bba)*", "ab"), quick=True, synthesis=False),
        found=synthesize(tasks.get("tomita_1"), SynthesisConfig(time_limit=20)))


def _new_tasks(say) -> None:
    try:
        found = new_tasks()
    except ImportError:  # pragma: no cover - crasp installed without the task suite or the compiler
        say("(the tasks or limit_transformer package is not installed)")
        return
    say(f"'#a divisible by 3', a Python function: APE {found.divisible.ape.headline[:120]}...")
    say(f"(ab|ba)* over {{a, b}}: NoPE {found.language.nope.headline}")
    say(f"  its program ({len(found.built.definitions)} definitions, built from the certificate) compiled to a Limit "
        f"Transformer: {'equals' if found.compiled_agrees else 'DIFFERS FROM'} the interpreter on 20 inputs up to "
        f"200 tokens")
    say(f"(ab|bba)* over {{a, b}}: NoPE {found.hard.nope.headline[:150]}...")
    search = found.found
    say(f"synthesis from tomita_1's reference alone ({search.candidates:,} candidates, {search.seconds:.1f} s):")
    say("  " + (search.text or "nothing found").rstrip().replace("\n", "\n  "))


def _depth_and_length(say) -> None:
    """The layer and training-length bounds of two tasks (docs/depth-and-length.md)."""
    try:
        import tasks
        from tasks.predict import predict
    except ImportError:  # pragma: no cover - crasp installed without the task suite
        say("(the tasks package is not installed)")
        return
    for name in ("L5", "re:ab:a+b+a+b+", "re:ab:a*b*"):
        prediction = predict(tasks.get(name), schemes=["nope"], quick=True)
        assert prediction.layers is not None and prediction.training_length is not None  # given unless decide_only
        nope, length = prediction.layers.schemes["nope"], prediction.training_length
        least = nope.at_least if nope.at_least is not None else "unknown"
        say(f"{name}: NoPE needs at most {nope.at_most} attention layers (count depth; its compiled Limit "
            f"Transformer has {nope.compiled_layers}), at least {least}")
        moore = next((f.length for f in length.findings if f.kind == "at_most"), None)
        bound = ("no training length for a DFA learner" if moore is None else
                 f"the DFA learner needs inputs up to length {length.exact} (2n - 2 = {moore})"
                 if length.exact is not None else f"the DFA learner needs inputs up to length at most {moore}")
        no_bound = any(f.kind == "no_computable_bound" for f in length.findings)
        say(f"  {bound}; {'no computable bound for its C-RASP class' if no_bound else 'C-RASP: see predict'}")
    say("`crasp predict TASK` gives each bound's citation; `crasp validate --experiment depth` trains the test")


def _validate_tasks(say, out_dir: Path) -> None:
    try:
        from validation.reports import generalization as report
        from validation.runs import protocol
        from validation.runs.spec import bin_labels
        from validation.runs.store import Store
        from validation.runs.sweep import validate
    except ImportError:  # pragma: no cover - crasp installed without the harness
        say("(the validation package is not installed)")
        return
    store = Store(out_dir / "runs")
    for name in DEMO_TASKS:
        start = time.perf_counter()
        result = validate(name, protocol.PRESETS["cpu"], "ape", store=store, seeds=DEMO_SEEDS)
        seeds = "; ".join(f"seed {r.spec.seed}: " + "/".join(f"{a:.3f}" for a in r.accuracy) for r in result.runs)
        say(f"{name:14s} {result.plan.model.label} bins {', '.join(bin_labels(result.plan.task.bins))}")
        say(f"{'':14s} {seeds}  ({time.perf_counter() - start:.0f} s)")
    # Runs a demo stored under an earlier budget of the preset are left out (the report counts them).
    table = report.rows(store, preset="cpu", tasks=DEMO_TASKS, planned=True)
    path = report.write(store, out_dir / "report", preset="cpu", tasks=DEMO_TASKS, table=table, planned=True)
    say(f"{DEMO_SEEDS} seeds per task, where the cpu preset counts 5 for algorithmic tasks: the outcomes below "
        "come from 95% intervals over so few seeds, and an interval across a threshold is inconclusive")
    for row in table:
        longest = row.intervals[-1].text() if row.intervals else "-"
        say(f"{row.task:14s} predicted {row.predicted:19s} observed {row.observed.value:12s} longest bin {longest}  "
            f"agrees: {row.agreement}")
    say(f"report and plots: {path} (runs stored in {store.root}; a second demo reuses them)")


def demo(out_dir: Path, out: TextIO) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    say = lambda text="": print(text, file=out)  # noqa: E731

    say("== 1. The program library: parse, check, run ==")
    for name, samples in _SAMPLES.items():
        checked = check(library.load(name))
        info = checked.info
        say(f"{name:12s} {info.model_class:32s} depth {info.depth}  period {info.period}  "
            f"offsets {sorted(info.offsets) or '-'}")
        result = run(checked, samples)
        assert result.accept is not None  # the sample programs are recognizers
        for sample, verdict in zip(samples, result.accept.tolist()):
            say(f"    {'accept' if verdict else 'reject'}  {sample}")

    say("\n== 2. A trace (Dyck-1 on '( ) ) (') ==")
    dyck = check(library.load("dyck1"))
    say(format_program(dyck.program).rstrip())
    say()
    say(trace(dyck, "( ) ) (").to_text())
    pages = [trace(check(library.load(name)), samples[0]) for name, samples in _SAMPLES.items()]
    path = write_traces(pages, out_dir / "traces.html", title="C-RASP library traces",
                        labels=list(_SAMPLES))
    say(f"\nHTML traces of the library examples: {path}")

    say("\n== 3. A generated program: majority over 150 symbols ==")
    alphabet = [f"s{k}" for k in range(150)]
    program = majority_program(alphabet)
    rng = np.random.default_rng(0)
    tokens = list(rng.choice(alphabet[:5], size=400, p=[0.3, 0.25, 0.2, 0.15, 0.1]))
    predicted = run(program, [tokens], alphabet=alphabet).next_tokens(0)
    counts: dict[str, int] = {}
    reference = []
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
        top = max(counts.values())
        leaders = [u for u, c in counts.items() if c == top]
        reference.append(leaders[0] if len(leaders) == 1 else None)
    agree = sum(p == r for p, r in zip(predicted, reference))
    say(f"{len(program.definitions)} definitions, {len(program.statements) - len(program.definitions)} "
        f"next(t) outputs; agrees with a Python reference at {agree}/{len(tokens)} positions")

    say("\n== 4. The task suite: library programs checked against the task references ==")
    _verify_tasks(say)

    say("\n== 5. Compiled Limit Transformers: exact, checked against the interpreter ==")
    _compile_library(say)

    say("\n== 6. Predictions: which tasks length-generalize, and why ==")
    _predict_tasks(say)

    say("\n== 7. New tasks: a Python function, regular expressions, a program found by search ==")
    _new_tasks(say)

    say("\n== 8. How deep and how long: layers and training length, from published theory ==")
    _depth_and_length(say)

    say("\n== 9. Speed: Dyck-1 on one input of 10^6 tokens ==")
    big = list(rng.choice(["(", ")"], size=1_000_000))
    start = time.perf_counter()
    accepted = run(dyck, [big]).accept
    elapsed = time.perf_counter() - start
    assert accepted is not None  # Dyck-1's program is a recognizer
    verdict = accepted[0]
    say(f"{'accept' if verdict else 'reject'} in {elapsed:.3f} s "
        f"({1e6 * len(dyck.definitions) / elapsed / 1e6:.0f} M position-definitions/s)")

    say("\n== 10. Training real transformers (cpu preset): accuracy per length bin vs the prediction ==")
    say("accuracy = exact match, teacher-forced, per length bin (the first is the training range)")
    _validate_tasks(say, out_dir)
