"""``crasp validate`` and ``crasp report``: train real transformers and compare with the predictions."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm


DEFAULT_STORE = "validation-runs"


class _Bar:
    """A progress bar per group of seeds (tqdm), fed during training (every
    :data:`validation.training.group.PROGRESS_EVERY` seconds, with the loss) and after every evaluation."""

    def __init__(self, label: str, err) -> None:
        self.label, self.err = label, err
        self.bar: tqdm | None = None

    def __call__(self, step: int, total: int, text: str) -> None:
        from tqdm import tqdm

        if self.bar is None or self.bar.total != total or step < self.bar.n:
            self.close()
            self.bar = tqdm(total=total, initial=step, desc=self.label, file=self.err, unit="step", leave=True,
                            dynamic_ncols=True, mininterval=0)  # a resumed group's rate counts its new steps
        self.bar.update(step - self.bar.n)
        self.bar.set_postfix_str(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _tasks(args) -> dict:
    """The tasks a command names, by their names (a ``MODULE:TASK`` imports its module)."""
    from tasks import registry

    names = list(args.tasks)
    if args.family:
        names += registry.names(args.family)
        if not registry.names(args.family):
            from validation.config import ValidationError

            raise ValidationError(f"no tasks in family {args.family!r}")
    if not names:
        from validation.config import ValidationError

        raise ValidationError("name a TASK or give --family")
    found = [registry.get(n) for n in names]
    return {task.name: task for task in found}


def _print_runs(result, out) -> None:
    """One line per seed of a validation: accuracy per bin (each bin named), steps, time, whether it counted."""
    from validation.runs.spec import bin_labels

    for run in result.runs:
        mark = "counted" if run in result.counted else "not counted"
        labels = bin_labels(run.spec.bins or result.plan.task.bins)
        accuracy = ", ".join(f"{label}: {a:.3f}" for label, a in zip(labels, run.accuracy))
        print(f"{result.task} {result.variant} {run.spec.model.label} seed {run.spec.seed}: {accuracy} "
              f"({run.steps} steps, {run.wall_time:.0f}s, {mark})", file=out)


def _print_plans(rules, pairs: list[tuple[str, str]], seeds: int | None, err, known: dict, predictions: dict) -> None:
    """Before anything trains: per (task, variant), what will train and how many seeds are tried,
    the prediction its runs will be compared with, and a warning where one constant answer covers
    most of a bin's test inputs (``known``: the tasks by name)."""
    from validation.config import Variant
    from validation.data.baseline import baselines, trivial_bins
    from validation.runs.protocol import plan_text
    from validation.runs.spec import bin_labels

    for name, variant in pairs:
        task = known[name]
        plan = rules.plan(task, Variant.parse(variant))
        wanted = seeds if seeds is not None else rules.seeds_for(task)
        print(f"plan: {name} {variant}: {plan_text(rules, plan, wanted)}", file=err)
        record = predictions[(name, variant)]
        print(f"prediction: {name} {variant}: {record.text()} ({record.brief}; budget {record.budget})", file=err)
        trivial = trivial_bins(plan.task, baselines(plan.task, min(plan.train.test_size, TRIVIAL_CHECK)))
        if trivial:
            shown = ", ".join(f"{label} ({share:.0%})" for label, (_, share) in
                              zip(bin_labels([b for b, _ in trivial]), trivial))
            print(f"crasp: warning: {name}: one constant answer is right on {shown} of the test inputs: a model "
                  f"that learned nothing scores that much, so those bins cannot tell whether it generalizes "
                  f"(draw inputs so that the answers are balanced)", file=err)


TRIVIAL_CHECK = 1000
"""The most test inputs per bin the warning about a trivial sampler draws (a bin's share of one
answer is known to within a few points from them)."""


def _predictions(rules, known: dict, pairs: list[tuple[str, str]], programs: list) -> dict:
    """Per (task, variant), the prediction its runs are compared with, for the task as the preset
    trains it, made before anything trains (a rejected ``--program`` stops the command here)."""
    from validation.config import Variant
    from validation.runs.prediction import prediction_for

    return {(name, variant): prediction_for(rules.plan(known[name], Variant.parse(variant)).task, variant, programs)
            for name, variant in pairs}


def _programs(args) -> list:
    """The ``--program`` files, parsed and checked (only with one task: a program is one task's)."""
    if not args.program:
        return []
    from crasp.cli import load_program
    from validation.config import ValidationError

    if len(args.tasks) != 1 or args.family:
        raise ValidationError("--program goes with one TASK (a program is written for one task)")
    return [load_program(path) for path in args.program]


def _run_json(result, run, store: str) -> dict:
    """One seed of a validation as ``crasp validate --json`` gives it."""
    stored = run.to_json()
    return {"task": result.task, "variant": result.variant, "preset": result.preset, "model": run.spec.model.label,
            "seed": run.spec.seed, "bins": [list(b) for b in run.spec.bins or result.plan.task.bins],
            "accuracy": stored["accuracy"], "steps": run.steps, "wall_time": run.wall_time,
            "stopped_early": run.stopped_early, "counted": run in result.counted, "key": stored["key"],
            "checkpoint": os.path.join(store, run.checkpoint), "spec": stored["spec"]}


def _print_json(document, out) -> None:
    import json

    print(json.dumps(document, indent=2), file=out)


def _device(args) -> None:
    """``args.device`` resolved (auto: cuda where torch sees a GPU, else cpu) and, for runs trained
    here, checked before any store is made; with ``--executor ray`` an auto device is resolved by
    each job on its own machine (``args.job_device``). ``args.machine``: the device with the way
    steps are taken and the time limit."""
    import time

    from validation.training.device import Machine, device_name, resolve_device
    from validation.training.group import stepping

    args.job_device = args.device
    args.device = device_name(args.device)
    if getattr(args, "executor", "sequential") != "ray":
        stepping(args.step, resolve_device(args.device))  # a bad --step is refused before anything is made
    deadline = time.time() + 60 * args.time_limit if args.time_limit else None
    args.machine = Machine(args.device, args.step, deadline)


def _with_sampler(plan, sampler: str, err):
    """``plan`` drawing its training examples with ``sampler`` where its task can (a note says
    where it cannot)."""
    import dataclasses

    from validation.data.device import cannot_draw

    why = cannot_draw(plan.task, epochs=bool(plan.train.epochs)) if sampler == "device" else None
    if why:
        print(f"crasp: note: {why}; its examples are drawn by the Python samplers", file=err)
        return plan
    return dataclasses.replace(plan, train=dataclasses.replace(plan.train, sampler=sampler))


def _overrides(args):
    """The settings ``--set``, ``--config`` and ``--precision`` replace in the preset's plans."""
    from validation.config import Overrides

    settings = list(args.set or ()) + ([f"precision={args.precision}"] if args.precision else [])
    return Overrides.parse(settings, args.config)


def _stopped(stop, err) -> None:
    print(f"crasp: stopped at the time limit: {stop}; run the same command again to resume (finished runs are "
          f"stored)", file=err)


def _sweep_elsewhere(args, pairs: list[tuple[str, str]], err, rules=None,
                     predictions: dict | None = None) -> tuple[set[tuple[str, str]], bool]:
    """With ``--executor ray`` or ``side-by-side``, train every (task, variant) with it into the
    store first (the command then reads the results from it); the pairs that failed, and whether
    the time limit stopped the sweep. ``rules``: the preset (with any overrides), else the one
    ``--preset`` names; ``predictions``: per pair, the prediction its runs record."""
    from validation.runs.executors import Settings, executor, plan_jobs

    chosen = executor(args.executor, address=args.address, cpus=args.cpus_per_run, gpus=args.gpus_per_run,
                      retries=args.retries, at_once=args.at_once)
    if chosen.name == "sequential":
        return set(), False
    rules = rules or args.preset
    jobs = plan_jobs(pairs, rules)
    settings = Settings(store=os.path.abspath(args.store), preset=rules, seeds=args.seeds,
                        device=getattr(args, "job_device", args.device), grid=getattr(args, "grid", False),
                        step=args.step, deadline=args.machine.deadline, predictions=dict(predictions or {}))
    tally = chosen.run(jobs, settings, report=lambda line: print(line, file=err, flush=True))
    for failure in tally.failed:
        print(f"crasp: error: {failure.job.task} {failure.job.variant} failed: {failure.why}", file=err)
    if tally.stopped:
        _stopped(", ".join(f"{job.task} {job.variant}" for job in tally.stopped), err)
    return {(f.job.task, f.job.variant) for f in tally.failed}, bool(tally.stopped)


def _make_plans(rules, pairs: list[tuple[str, str]], known: dict | None = None) -> None:
    """Make the plan of every (task, variant) under ``rules`` before the store is opened, so that a
    setting one of them cannot take is refused while nothing has changed (``known``: tasks by name
    that the registry may not hold)."""
    from tasks import registry
    from validation.config import Variant

    for task, variant in pairs:
        rules.plan((known or {}).get(task) or registry.get(task), Variant.parse(variant))


def _with_bars(err, work):
    """``work(progress)``, where ``progress(label)`` opens the progress bar of the next run (runs
    go one after another: the last run's bar is done); every bar is closed at the end."""
    bars: list[_Bar] = []

    def progress(label: str) -> _Bar:
        for bar in bars:
            bar.close()
        bars.append(_Bar(label, err))
        return bars[-1]

    try:
        return work(progress)
    finally:
        for bar in bars:
            bar.close()


def _experiment(args, out, err) -> int:
    """``crasp validate --experiment depth|training-length``: train its runs, write its report."""
    from validation.config import ValidationError
    from validation.experiments.depth import experiment, run
    from validation.runs.store import Store
    from validation.runs.sweep import Stopped

    experiment(args.experiment)  # an unknown name is refused before the store is created
    if (args.tasks or args.family or args.variant or args.grid or args.executor != "sequential" or args.preset != "cpu"
            or args.sampler != "python" or args.set or args.config or args.precision):
        raise ValidationError("--experiment brings its own tasks, models, variant and CPU-scale protocol: give none "
                              "of TASK, --family, --variant, --grid, --preset, --executor, --sampler, --set, "
                              "--config or --precision with it")
    _device(args)
    try:
        outcome = _with_bars(err, lambda progress: run(
            args.experiment, store=Store(args.store), out=args.report or f"{args.experiment}-report",
            device=args.machine, seeds=args.seeds, progress=progress))
    except Stopped as stop:
        _stopped(str(stop), err)
        return 0
    if args.json:
        _print_json({"store": args.store, "device": args.device, "overrides": {},
                     "runs": [_run_json(result, r, args.store) for result in outcome.results for r in result.runs],
                     "failed": [], "report": str(outcome.report)}, out)
        return 0
    for result in outcome.results:
        _print_runs(result, out)
    print(f"report: {outcome.report}", file=out)
    return 0


def cmd_validate(args, out, err) -> int:
    from validation.config import ValidationError, Variant
    from validation.reports import generalization as report
    from validation.runs import protocol
    from validation.runs.store import Store
    from validation.runs.sweep import Stopped, search, validate

    if args.experiment:
        return _experiment(args, out, err)
    if args.sampler != "python" and args.executor != "sequential":
        raise ValidationError("--sampler applies to runs trained here: leave --executor sequential with it")
    overrides = _overrides(args)
    if args.grid and (overrides.model is not None or "lr" in dict(overrides.train)):
        raise ValidationError("--grid searches the model and lr itself: give neither with --set or --config")
    chosen = protocol.overridden(protocol.preset(args.preset), overrides)
    variants = [Variant.parse(v).name for v in (args.variant or ["ape"])]
    known = _tasks(args)
    names = list(known)
    pairs = [(name, variant) for name in names for variant in variants]
    if overrides:
        _make_plans(chosen, pairs, known)
    _device(args)
    predictions = _predictions(chosen, known, pairs, _programs(args))
    store = Store(args.store)  # a damaged store refuses here, before any plan is printed
    if not args.grid:
        _print_plans(chosen, pairs, args.seeds, err, known, predictions)
    failed, stopped = _sweep_elsewhere(args, pairs, err, chosen if overrides else None, predictions)
    results = []
    for name, variant in ([] if stopped else pairs):
        if (name, variant) in failed:
            continue
        bar = _Bar(f"{name} {variant}", err)
        try:
            plan = None
            if args.grid:
                plan = search(name, variant, store=store, plan_of=chosen.plan, device=args.machine, progress=bar)
            if args.sampler != "python":
                plan = _with_sampler(plan or chosen.plan(known[name], Variant.parse(variant)), args.sampler, err)
            result = validate(known[name], chosen, variant, store=store, seeds=args.seeds, device=args.machine,
                              progress=bar, plan=plan, prediction=predictions[(name, variant)])
        except Stopped as stop:
            _stopped(str(stop), err)
            stopped = True
            break
        finally:
            bar.close()
        results.append(result)
        if not args.json:
            _print_runs(result, out)
    for problem in store.problems:
        print(f"crasp: warning: damaged run {problem.key}: {problem.what} (trained again where needed)", file=err)
    path = (report.write(store, args.report, preset=args.preset, tasks=names, known=known)
            if args.report and not stopped else None)
    if args.json:
        _print_json({"store": args.store, "device": args.device, "overrides": overrides.to_json(),
                     "runs": [_run_json(result, r, args.store) for result in results for r in result.runs],
                     "failed": [{"task": task, "variant": variant} for task, variant in sorted(failed)],
                     "stopped": stopped, "report": str(path) if path else None}, out)
    elif path:
        print(f"report: {path}", file=out)
    return 1 if failed else 0


def cmd_report(args, out, err) -> int:
    import dataclasses

    from tasks import registry

    from validation.config import ValidationError
    from validation.reports import generalization as report
    from validation.runs.store import Store, has_store, repair

    if not has_store(args.store):  # a store whose SQLite file is gone but whose checkpoints are not is refused by Store
        raise ValidationError(f"{args.store}: no run store here (run `crasp validate` first, or give --store)")
    repaired = repair(args.store).lines() if args.repair else []
    if not args.json:
        for line in repaired:
            print(line, file=out)
    store = Store(args.store)  # checked when opened: a damaged store raises, naming the damage and --repair
    known = {task.name: task for task in (registry.get(spec) for spec in args.tasks)}  # MODULE:TASK imports it
    tasks = list(known) or None
    table = report.rows(store, preset=args.preset, tasks=tasks, planned=args.as_planned, known=known)
    if not table and not report.in_progress(store, preset=args.preset, tasks=tasks, planned=args.as_planned):
        chosen = ", ".join(f"{k} {v}" for k, v in (("tasks", ", ".join(known)), ("preset", args.preset)) if v)
        raise ValidationError(f"{args.store}: no finished runs" + (f" of {chosen}" if chosen else "")
                              + (" as the preset plans them now" if args.as_planned else "")
                              + " (crasp validate trains them; crasp store import brings them from elsewhere)")
    path = report.write(store, args.out, preset=args.preset, tasks=tasks, table=table, planned=args.as_planned,
                        known=known)
    if args.json:
        running = report.running(report.in_progress(store, preset=args.preset, tasks=tasks, planned=args.as_planned))
        _print_json({"store": args.store, "report": str(path),
                     "plots": {task: str(path.parent / f"{task}.png") for task in sorted({r.task for r in table})},
                     "rows": [row.to_json() for row in table],
                     "agreement": dataclasses.asdict(report.agreement(table)),
                     "in_progress": [_running_json(r) for r in running],
                     "problems": [{"key": p.key, "what": p.what} for p in store.problems],
                     "repair": repaired if args.repair else None}, out)
    else:
        print(path.read_text(encoding="utf-8"), file=out)
    for problem in store.problems:
        print(f"crasp: warning: damaged run {problem.key}: {problem.what}", file=err)
    return 0


def _running_json(running) -> dict:
    """A seed of a group in training as ``crasp report --json`` lists it."""
    spec = running.spec
    return {"group_key": running.group_key, "task": spec.task if spec else None,
            "variant": spec.variant if spec else None, "preset": spec.preset if spec else None,
            "model": spec.model.label if spec else None, "seed": running.seed, "step": running.step,
            "total_steps": running.total_steps, "bins": [list(b) for b in running.bins] if running.bins else None,
            "last": list(running.last) if running.last is not None else None}


def cmd_arithmetic(args, out, err) -> int:
    from validation.experiments.arithmetic import experiment, run
    from validation.reports.arithmetic import claims
    from validation.reports.arithmetic import rows as arithmetic_rows
    from validation.runs.protocol import overridden, preset
    from validation.runs.store import Store
    from validation.runs.sweep import Stopped

    chosen = experiment(args.experiment)  # bad names are refused before the store is created
    rules = preset(args.preset)
    runs = chosen.restricted(args.preset, args.run) if args.run else chosen  # bad --run names refused here too
    overrides = _overrides(args)
    changed = overridden(rules, overrides)
    pairs = [(item.task, item.variant) for item in runs.runs(args.preset)]
    if overrides:
        _make_plans(changed, pairs)
    _device(args)
    store = Store(args.store)
    failed, stopped = _sweep_elsewhere(args, pairs, err, changed if overrides else None)
    if failed:
        return 1
    if stopped:
        return 0
    try:
        outcome = _with_bars(err, lambda progress: run(
            args.experiment, preset=args.preset, store=store, out=args.out, device=args.machine, seeds=args.seeds,
            only=args.run, overrides=overrides, progress=progress))
    except Stopped as stop:
        _stopped(str(stop), err)
        return 0
    for problem in store.problems:
        print(f"crasp: warning: damaged run {problem.key}: {problem.what} (trained again where needed)", file=err)
    if args.json:
        found = claims(outcome.experiment, args.preset, arithmetic_rows(outcome.results), outcome.cascades)
        _print_json({"experiment": args.experiment, "preset": args.preset, "store": args.store, "device": args.device,
                     "overrides": overrides.to_json(),
                     "runs": [_run_json(result, r, args.store) for result in outcome.results for r in result.runs],
                     "claims": [{"task": c.run.task, "variant": c.run.variant, "claimed": c.run.claimed,
                                 "agrees": c.agrees, "row": c.row.to_json() if c.row else None}
                                for c in found],
                     "report": str(outcome.report)}, out)
        return 0
    for result in outcome.results:
        _print_runs(result, out)
    print(f"report: {outcome.report}", file=out)
    return 0


def cmd_store(args, out, err) -> int:
    """``crasp store export|import``: a store's runs to a records file and back."""
    from validation.config import ValidationError
    from validation.runs.records import export, import_records
    from validation.runs.store import Store, has_store

    if args.action == "export":
        if not has_store(args.store):
            raise ValidationError(f"{args.store}: no run store here (give --store)")
        store = Store(args.store)
        done = export(store, args.file, tasks=args.tasks, preset=args.preset, weights=args.weights)
        print(f"wrote {done.path}: {done.runs} runs ({done.weights} with their weights), {done.size:,} bytes",
              file=out)
    else:
        store = Store(args.store)
        print(import_records(store, args.file).line(), file=out)
    for problem in store.problems:
        print(f"crasp: warning: damaged run {problem.key}: {problem.what} (left out)", file=err)
    return 0


def cmd_demo(args, out, err) -> int:
    from pathlib import Path

    from validation.experiments.demo import demo

    demo(Path(args.out), out)
    return 0


def _device_flag(parser) -> None:
    from crasp.arguments import number

    parser.add_argument("--device", default="auto",
                        help="auto (default: cuda where torch sees a GPU, else cpu), cpu, cuda or cuda:N")
    parser.add_argument("--step", choices=["auto", "eager", "captured", "compiled"], default="auto",
                        help="how each optimizer step is taken: auto (default: captured on a GPU, eager on a CPU), "
                             "eager (every operator from Python), captured (static shapes, learning rate and step "
                             "count on the device: one CUDA graph replay a step on a GPU), compiled (captured, "
                             "through torch.compile first)")
    parser.add_argument("--precision", choices=["tf32", "fp32", "bf16"],
                        help="the runs' arithmetic, as --set precision=...: tf32 (the presets': TF32 matrix products "
                             "on a GPU, float32 on a CPU), fp32, or bf16 (autocast, float32 weights and optimizer)")
    parser.add_argument("--time-limit", type=number(minimum=0.01), metavar="MINUTES",
                        help="stop after this many minutes, the groups in training saved: the same command run "
                             "again resumes them (finished runs are kept)")


def _override_flags(parser) -> None:
    from validation.config import OVERRIDABLE

    parser.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="replace a setting of the preset's training, e.g. lr=3e-4, steps=2000, model=2l2h64d "
                             "(repeat for several; keys: " + ", ".join(OVERRIDABLE) + "); the runs are stored apart "
                             "from the preset's")
    parser.add_argument("--config", metavar="FILE.toml",
                        help="settings as --set takes them, from a TOML file of top-level KEY = VALUE lines "
                             "(--set wins)")


def _executor_flags(parser) -> None:
    from crasp.arguments import NONNEGATIVE, number

    parser.add_argument("--executor", choices=["sequential", "side-by-side", "ray"], default="sequential",
                        help="sequential (default): one run group after another here; side-by-side: --at-once groups "
                             "at a time in this process, each in a thread and (on a GPU) a CUDA stream of its own, "
                             "to fill a GPU with small models; ray: each (task, variant) a Ray task, on this machine "
                             "or on the cluster --address names (pip install 'crasp-lengthgen[ray]')")
    parser.add_argument("--at-once", type=number(minimum=1), default=4, metavar="N",
                        help="with --executor side-by-side: groups trained at a time (default 4)")
    parser.add_argument("--address", help="a running Ray cluster to join (e.g. ray://head:10001 or auto)")
    parser.add_argument("--cpus-per-run", type=number(minimum=0.01), default=1.0, metavar="N",
                        help="CPUs each Ray task reserves (default 1; also its torch threads)")
    parser.add_argument("--gpus-per-run", type=number(minimum=0.0), default=0.0, metavar="N",
                        help="GPUs each Ray task reserves, a fraction to share one (default 0)")
    parser.add_argument("--retries", type=NONNEGATIVE, default=2,
                        help="times a Ray task whose worker died is started again (default 2)")


def add_commands(commands) -> None:
    demo_p = commands.add_parser("demo", help="a short end-to-end tour of the toolkit on embedded defaults")
    demo_p.add_argument("--out", default="demo-output", help="folder for the demo's files")
    demo_p.set_defaults(handler=cmd_demo)
    validate_p = commands.add_parser(
        "validate", help="train transformers on a task and store accuracy per length bin",
        description="Train GPT-2-style transformers on TASK under a preset (cpu: small, for a laptop; paper: the "
        "published protocol, for a GPU), several seeds at once, and store every run. A killed run resumes "
        "from its last evaluation; finished runs are never trained again.")
    validate_p.add_argument("tasks", nargs="*", metavar="TASK", help="registered tasks to train on (or --family)")
    validate_p.add_argument("--family", help="every task of a family (e.g. algorithmic)")
    validate_p.add_argument("--preset", default="cpu", help="cpu (default) or paper")
    validate_p.add_argument("--variant", action="append",
                            help="ape (default), nope, ape_reg or ape_reg<coef>, rpe<k> (relative positions "
                                 "clipped at k), upe<k> (uniform multiplier positions), or on Duan et al.'s tasks "
                                 "sinusoidal, abs, abc, abc<kappa>, abc<kappa>-layers (encoder-decoder); repeat for "
                                 "several")
    validate_p.add_argument("--seeds", type=int, help="seeds that must count (default: the preset's)")
    validate_p.add_argument("--program", action="append", metavar="FILE.cr",
                            help="a candidate program for the prediction the runs are compared with, as crasp "
                                 "predict --program takes it (with one TASK; repeatable)")
    validate_p.add_argument("--sampler", choices=["python", "device"], default="python",
                            help="draw training examples one at a time with the tasks' own samplers on the host "
                                 "(python, default) or as tensor operations on the run's device where a task can "
                                 "(device: other runs, another random stream, the same distribution)")
    _device_flag(validate_p)
    _override_flags(validate_p)
    validate_p.add_argument("--json", action="store_true",
                            help="print one JSON document: the store, the device, the overrides, every run (task, "
                                 "variant, preset, model, seed, bins, accuracy, steps, wall time, counted, key, "
                                 "checkpoint, spec) and the report's path")
    validate_p.add_argument("--store", default=DEFAULT_STORE, help=f"run store folder (default {DEFAULT_STORE})")
    validate_p.add_argument("--grid", action="store_true",
                            help="search the paper's grid of configurations first (seed 0 each)")
    validate_p.add_argument("--report", metavar="DIR", help="also write the report for these tasks to DIR (with "
                            "--experiment: the experiment's report, default EXPERIMENT-report)")
    validate_p.add_argument("--experiment", metavar="NAME",
                            help="run an experiment instead of TASKs: depth (Yang, Cadilhac & Chiang's L_3-L_6 at 1-4 "
                                 "layers, NoPE) or training-length (a regular and a counting task trained on inputs "
                                 "of at most 2, 4, 8, 16, 32 symbols); see docs/depth-and-length.md")
    _executor_flags(validate_p)
    validate_p.set_defaults(handler=cmd_validate)

    arithmetic_p = commands.add_parser(
        "arithmetic", help="reproduce an arithmetic paper's central claim (xu, sabbaghi, duan)",
        description="Train the runs an arithmetic paper's central claim rests on (xu: Xu et al., downward versus "
        "upward generalization, truncated operands, moduli, relative positions; sabbaghi: Sabbaghi et al., "
        "relative versus absolute positions on pad-aligned addition, carry cascades; duan: Duan et al., attention "
        "bias scaffolding and calibration in an encoder-decoder), probe the trained models "
        "and write a report with the toolkit's predictions beside observed and published numbers.")
    arithmetic_p.add_argument("experiment", metavar="EXPERIMENT", help="xu, sabbaghi or duan")
    arithmetic_p.add_argument("--preset", default="cpu", help="cpu (default) or paper")
    arithmetic_p.add_argument("--seeds", type=int, help="seeds that must count (default: the preset's)")
    _device_flag(arithmetic_p)
    _override_flags(arithmetic_p)
    arithmetic_p.add_argument("--json", action="store_true",
                              help="print one JSON document: the experiment, preset, store, device and overrides, "
                                   "every run (as validate --json gives them), each claim with its row and "
                                   "agreement, and the report's path")
    arithmetic_p.add_argument("--store", default=DEFAULT_STORE, help=f"run store folder (default {DEFAULT_STORE})")
    arithmetic_p.add_argument("--out", default="arithmetic-report", help="folder for the report and plots")
    arithmetic_p.add_argument("--run", action="append", metavar="TASK:VARIANT",
                              help="only this run of the experiment (repeat for several; e.g. xu_addition:rpe); "
                                   "processes given different runs can share one GPU")
    _executor_flags(arithmetic_p)
    arithmetic_p.set_defaults(handler=cmd_arithmetic)

    store_p = commands.add_parser(
        "store", help="export a store's runs to a records file, or import one",
        description="Pool runs trained on different machines: export writes the chosen runs' records (spec, seeds, "
        "evaluations, timings, where they trained; weights only with --weights) to one small SQLite file; import "
        "merges such a file into a store, idempotently, refusing a record whose run the store holds with other "
        "results (nothing is imported then).")
    actions = store_p.add_subparsers(dest="action", required=True, metavar="ACTION",
                                     help="export (a store's runs to a records file) or import (a records file into "
                                          "a store)")
    export_p = actions.add_parser("export", help="write the records of a store's runs to FILE")
    export_p.add_argument("file", metavar="FILE", help="the records file to write (replaced if it exists)")
    export_p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks' runs")
    export_p.add_argument("--preset", help="only runs of this preset")
    export_p.add_argument("--weights", action="store_true", help="carry each run's weights too (larger)")
    export_p.add_argument("--store", default=DEFAULT_STORE, help=f"run store folder (default {DEFAULT_STORE})")
    import_p = actions.add_parser("import", help="merge the records of FILE into a store")
    import_p.add_argument("file", metavar="FILE", help="a records file written by crasp store export")
    import_p.add_argument("--store", default=DEFAULT_STORE, help=f"run store folder (default {DEFAULT_STORE})")
    store_p.set_defaults(handler=cmd_store)

    report_p = commands.add_parser(
        "report", help="prediction vs observed vs published accuracy, with plots",
        description="Read the run store and write report.md and a PNG per task: the toolkit's prediction, observed "
        "accuracy per bin (mean and spread over counted seeds), the published accuracy, and whether they agree; runs "
        "stopped before they finished are listed with the step they reached and their last evaluation.")
    report_p.add_argument("tasks", nargs="*", metavar="TASK",
                          help="only these tasks (default: every task in the store): names, re:ALPHABET:REGEX, or "
                               "MODULE:TASK for a task of your own (its module is imported, so its rows get their "
                               "prediction)")
    report_p.add_argument("--store", default=DEFAULT_STORE, help=f"run store folder (default {DEFAULT_STORE})")
    report_p.add_argument("--preset", help="only runs of this preset")
    report_p.add_argument("--as-planned", action="store_true",
                          help="with --preset: only the runs trained with the settings the preset plans now (runs of "
                               "an earlier budget of the preset, or of --set, are left out and counted)")
    report_p.add_argument("--out", default="validation-report", help="folder for report.md and plots")
    report_p.add_argument("--repair", action="store_true",
                          help="first repair a damaged store: move a damaged runs.sqlite aside (never deleted), "
                               "rebuild the rows its checkpoints allow, and say what could not be recovered")
    report_p.add_argument("--json", action="store_true",
                          help="print one JSON document instead of the markdown: the rows (prediction, observed "
                               "intervals, outcome, published, agreement), the tally, runs in progress, damaged "
                               "runs and the written paths")
    report_p.set_defaults(handler=cmd_report)
