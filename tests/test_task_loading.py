"""Odd inputs a user tries: `MODULE:TASK` specs that cannot be loaded, references that cannot be
trusted, out-of-range flags. Each is a clear error (exit 1, or a usage error with exit 2) that names
what was wrong, never a traceback."""

from __future__ import annotations

import dataclasses
import io
import sys
import textwrap

import pytest

import tasks
from crasp.cli import main
from tasks import catalogue, registry
from tasks.evidence.reference import check_reference
from tasks.loading import load_task
from tasks.registry import EOS, Format, TaskError

USER_MODULE = '''
    import dataclasses
    import itertools

    import tasks
    from tasks.registry import Format, Task


    def strings(n, rng):
        return tuple(rng.choice(["a", "b"], size=n))


    MORE_B = Task(name="tl_more_b", family="user", format=Format.ACCEPT, symbols=("a", "b"), outputs=("a", "b"),
                  sample_input=strings, answer=lambda x: x.count("b") > x.count("a"), valid=lambda x: True,
                  train_range=(0, 50), bins=((0, 50),), min_length=0)
    NONE = dataclasses.replace(MORE_B, name="tl_none", answer=lambda x: None)
    _flips = itertools.count()
    FLIP = dataclasses.replace(MORE_B, name="tl_flip", answer=lambda x: next(_flips) % 2 == 0)
    WORDY = dataclasses.replace(MORE_B, name="tl_wordy", answer=lambda x: "yes" if "b" in x else "no")
    RAISES = dataclasses.replace(MORE_B, name="tl_raises", answer=lambda x: x[5] == "a")
    NUMBER = 3


    @tasks.task("tl_ends_b", symbols=("a", "b"), format="accept", sampler=strings)
    def ends_b(x):
        return x[-1] == "b"
'''


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    """The current directory is tmp_path; modules written there, sys.path and the registry are
    restored after the test."""
    tasks.names()  # the suite first
    monkeypatch.setattr(catalogue, "_REGISTRY", dict(catalogue._REGISTRY))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)

    def write(name: str, text: str) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))

    yield write
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(tmp_path)):
            del sys.modules[name]


def crasp(*argv, capsys=None):
    """Exit status, standard output and standard error (argparse writes usage errors to sys.stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    usage = capsys.readouterr().err if capsys is not None else ""
    text = err.getvalue() + usage
    assert "Traceback" not in text and "Traceback" not in out.getvalue(), text
    return status, out.getvalue(), text


COMMANDS = [("predict", "--quick", "--no-synthesis"), ("verify",), ("synthesize", "-q", "--time", "1")]


# ---------------------------------------------------------------- loading MODULE:TASK


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("spec, message", [
    (":", "task ':' names neither a module nor a task"),
    (":t", "task ':t' has no module name before ':'"),
    ("tl_mod:", "task 'tl_mod:' has no task name after ':'"),
    (".:x", "task '.:x': relative module names are not supported"),
    (".tl_mod:x", "relative module names are not supported"),
    ("some/dir:x", "'some/dir' is not a module name"),
    ("nosuchmodule:t", "cannot import module 'nosuchmodule' for task 'nosuchmodule:t': no module named "
                       "'nosuchmodule' in the current directory"),
    ("tl_mod.py:MORE_B", "name the module without .py: tl_mod:MORE_B"),
    ("tl_boom:t", "cannot import module 'tl_boom' for task 'tl_boom:t': RuntimeError: boom (tl_boom.py:3)"),
    ("tl_syntax:t", "cannot import module 'tl_syntax' for task 'tl_syntax:t': SyntaxError: "),
    ("tl_missing_import:t", "ModuleNotFoundError: No module named 'no_such_dependency' (tl_missing_import.py:1)"),
    ("tl_exits:t", "cannot import module 'tl_exits' for task 'tl_exits:t': SystemExit: 3 (tl_exits.py:2)"),
    ("tl_mod:nope", "no such task 'nope' in module 'tl_mod'; it has MORE_B, NONE, FLIP, WORDY, RAISES, ends_b"),
    ("tl_empty:t", "no such task 't' in module 'tl_empty'; it defines no Task"),
    ("tl_mod:NUMBER", "tl_mod.NUMBER is an int (3), not a tasks.registry.Task"),
    ("tl_mod:strings", "tl_mod.strings is a function, not a tasks.registry.Task; decorate it with @tasks.task"),
    ("tl_mod:dataclasses", "tl_mod.dataclasses is the module dataclasses, not a tasks.registry.Task"),
])
def test_a_task_spec_that_cannot_be_loaded_is_one_clear_error(user_dir, capsys, command, spec, message):
    user_dir("tl_mod", USER_MODULE)
    user_dir("tl_boom", '"""A module that raises on import."""\n\nraise RuntimeError("boom")\n')
    user_dir("tl_syntax", "def broken(:\n    pass\n")
    user_dir("tl_missing_import", "import no_such_dependency\n")
    user_dir("tl_exits", "import sys\nsys.exit(3)\n")
    user_dir("tl_empty", "VALUE = 1\n")
    status, _, err = crasp(command[0], spec, *command[1:], capsys=capsys)
    assert status == 1 and err.startswith("crasp: error: ") and message in err, err
    assert err.count("\n") == 1  # one line


def test_a_syntax_error_is_shown_with_its_file_and_line(user_dir):
    user_dir("tl_syntax_line", "X = 1\n\ndef broken(:\n    pass\n")
    with pytest.raises(TaskError, match=r"SyntaxError: invalid syntax \(tl_syntax_line\.py:3\)"):
        load_task("tl_syntax_line:broken")


def test_validate_loads_tasks_the_same_way(user_dir, capsys, tmp_path):
    user_dir("tl_boom", 'raise RuntimeError("boom")\n')
    status, _, err = crasp("validate", "tl_boom:t", "--store", str(tmp_path / "store"), capsys=capsys)
    assert status == 1 and "cannot import module 'tl_boom' for task 'tl_boom:t': RuntimeError: boom" in err


def test_tasks_of_a_module_in_the_current_directory_load(user_dir):
    user_dir("tl_mod", USER_MODULE)
    more_b = load_task("tl_mod:MORE_B")  # the current directory is importable
    module = sys.modules["tl_mod"]
    assert more_b is module.MORE_B
    assert tasks.get("tl_mod:MORE_B") is module.MORE_B  # registry.get goes through load_task
    assert load_task("tl_mod:ends_b").name == load_task("tl_mod:tl_ends_b").name == "tl_ends_b"
    for bad in ("tl_mod", "tl_mod:a:b"):
        with pytest.raises(TaskError, match="MODULE:TASK|not a task name"):
            load_task(bad)


# ---------------------------------------------------------------- the reference is checked


@pytest.mark.parametrize("command", COMMANDS + [("verify-program",)], ids=lambda c: c[0])
@pytest.mark.parametrize("attribute, message", [
    ("NONE", "the reference of task 'tl_none' returned None on input ''"),
    ("FLIP", "the reference of task 'tl_flip' is not deterministic: input '' gave True, then False"),
    ("WORDY", "the reference of task 'tl_wordy' on input '' returned 'no': an accept task's answer must be a "
              "bool, not str"),
    ("RAISES", "the reference of task 'tl_raises' raised IndexError: tuple index out of range on input ''"),
])
def test_every_command_checks_the_reference_first(user_dir, capsys, command, attribute, message):
    user_dir("tl_mod", USER_MODULE)
    extra = command[1:]
    name = command[0]
    if name == "verify-program":
        with open("more_b.cr", "w") as handle:
            handle.write('L = #"b" > #"a"\n')
        name, extra = "verify", ("--program", "more_b.cr", "--samples", "5", "--max-length", "20")
    status, _, err = crasp(name, f"tl_mod:{attribute}", *extra, capsys=capsys)
    if command[0] == "verify":  # without --program: no library program is the first problem
        assert status == 1 and "has no ape program" in err
        return
    assert status == 1 and message in err, err


def test_a_sound_user_task_passes_and_is_verified(user_dir, capsys):
    user_dir("tl_mod", USER_MODULE)
    with open("more_b.cr", "w") as handle:
        handle.write('L = #"b" > #"a"\n')
    status, out, err = crasp("verify", "tl_mod:MORE_B", "--program", "more_b.cr", "--samples", "5",
                             "--max-length", "20", capsys=capsys)
    assert status == 0 and out.startswith("PASS tl_more_b"), err


def test_validation_data_check_the_reference(user_dir):
    pytest.importorskip("torch")
    from validation.data.streams import TrainingStream, held_out_sets

    user_dir("tl_mod", USER_MODULE)
    with pytest.raises(TaskError, match="returned None on input"):
        held_out_sets(load_task("tl_mod:NONE"), 4)
    with pytest.raises(TaskError, match="not deterministic"):
        TrainingStream(load_task("tl_mod:FLIP"), 0)
    assert len(TrainingStream(load_task("tl_mod:MORE_B"), 0).next(3)) == 3


def _task(format: Format, answer, **options):
    return registry.Task(name="tl_format", family="user", format=format, symbols=("a", "b"),
                         outputs=options.pop("outputs", ("a", "b")),
                         sample_input=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)), answer=answer,
                         valid=lambda x: True, train_range=(0, 20), bins=((0, 20),), **options)


@pytest.mark.parametrize("format, answer, message", [
    (Format.SEQ2SEQ, lambda x: "".join(x), "a seq2seq answer must be a tuple of output tokens, not str"),
    (Format.SEQ2SEQ, lambda x: ("c",), "the answer holds 'c', which is not among the task's outputs (a, b)"),
    (Format.NEXT_SET, lambda x: 3, "a next-set answer must be a tuple of sets, one after each prefix, not int"),
    (Format.NEXT_SET, lambda x: tuple("ab" for _ in range(len(x) + 1)),
     "a tuple of sets, one after each prefix, not of str"),
    (Format.NEXT_SET, lambda x: (frozenset({"a"}),) * len(x),
     "a next-set answer has one set after each prefix, the empty one first: 2 here, not 1"),
    (Format.NEXT_SET, lambda x: (frozenset({"z"}),) * (len(x) + 1), "the answer holds 'z', which is not among"),
    (Format.ALIGNED, lambda x: ("a",), "an aligned answer must map positions of <bos> x to output tokens"),
    (Format.ALIGNED, lambda x: {len(x) + 5: "a"},
     "an aligned answer's keys must be positions 0 .. 1 of <bos> x, not 6"),
    (Format.ALIGNED, lambda x: {0: "q"}, "the answer holds 'q', which is not among the task's outputs"),
    (Format.ACCEPT, lambda x: 1, "an accept task's answer must be a bool, not int"),
])
def test_answers_of_the_wrong_type_for_the_format(format, answer, message):
    with pytest.raises(TaskError, match="on input 'a' returned") as caught:
        check_reference(_task(format, answer), inputs=20)
    assert message in str(caught.value)


def test_answers_of_the_right_type_pass_for_every_format():
    check_reference(_task(Format.SEQ2SEQ, lambda x: tuple(reversed(x))), inputs=20)
    check_reference(_task(Format.ACCEPT, lambda x: len(x) % 2 == 0), inputs=20)
    check_reference(_task(Format.NEXT_SET, lambda x: tuple(frozenset({"a", "b", EOS}) for _ in range(len(x) + 1))),
                    inputs=20)
    check_reference(_task(Format.ALIGNED, lambda x: {k + 1: t for k, t in enumerate(x)}), inputs=20)


def test_the_check_is_made_once_per_task_object():
    calls = []

    def reference(x):
        calls.append(x)
        return len(x) > 2

    task = _task(Format.ACCEPT, reference)
    check_reference(task, inputs=20)
    first = len(calls)
    assert first > 0
    check_reference(task, inputs=20)
    check_reference(task, inputs=10)
    assert len(calls) == first  # memoised
    check_reference(dataclasses.replace(task, name="tl_copy"), inputs=20)
    assert len(calls) > first  # another task object is checked on its own


def test_every_suite_reference_passes_the_check():
    for task in (t for t in tasks.all_tasks() if t.family in ("algorithmic", "formal", "arithmetic")):
        check_reference(task)


# ---------------------------------------------------------------- flags


@pytest.mark.parametrize("argv, message", [
    (("verify", "tomita_1", "--samples", "-1"), "argument --samples: -1 is less than 0"),
    (("verify", "tomita_1", "--max-length", "-5"), "argument --max-length: -5 is less than 1"),
    (("verify", "tomita_1", "--exhaustive-length", "-1"), "argument --exhaustive-length: -1 is less than 0"),
    (("verify", "tomita_1", "--seed", "-1"), "argument --seed: -1 is less than 0"),
    (("predict", "tomita_1", "--seed", "-1"), "argument --seed: -1 is less than 0"),
    (("synthesize", "tomita_1", "--seed", "-2"), "argument --seed: -2 is less than 0"),
    (("synthesize", "tomita_1", "--max-size", "-1"), "argument --max-size: -1 is less than 0"),
    (("synthesize", "tomita_1", "--time", "-1"), "argument --time: -1 is less than 0"),
    (("synthesize", "tomita_1", "--time", "nan"), "argument --time: 'nan' is not a finite number"),
    (("synthesize", "tomita_1", "--time", "inf"), "argument --time: 'inf' is not a finite number"),
    (("synthesize", "tomita_1", "--max-size", "many"), "argument --max-size: 'many' is not an integer"),
    (("predict", "--all", "--family", "nosuch"), "argument --family: invalid choice: 'nosuch' (choose from "),
    (("tasks", "--family", "nosuch"), "argument --family: invalid choice: 'nosuch' (choose from "),
])
def test_out_of_range_flags_are_usage_errors_naming_the_flag(capsys, argv, message):
    status, out, err = crasp(*argv, capsys=capsys)
    assert status == 2 and out == "" and message in err, err
    if "--family" in argv:
        assert all(f"'{family}'" in err for family in ("algorithmic", "formal", "arithmetic"))


def test_families_are_listed_in_help_and_accepted(capsys):
    status, out, _ = crasp("tasks", "--family", "formal", capsys=capsys)
    assert status == 0 and "tomita_1" in out and "majority" not in out.split()
    assert main(["tasks", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "only this family: algorithmic, formal, arithmetic" in help_text
