"""Program synthesis (tasks.synthesis): suite tasks, user tasks, NoPE mode, random programs, the command."""

import io
import itertools
import json
import re
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import crasp
import tasks
from crasp.checker import check
from crasp.cli import main
from crasp.interpreter import run
from crasp.strategies import programs
from tasks.synthesis import (SynthesisConfig, SynthesisError, SynthesisResult, expr_size, program_size,
                             synthesize)
from tasks.registry import BOS, Example, Format, Task
from tasks.verify import predictions, verify

QUICK_VERIFY = dict(verify_exhaustive=2000, verify_samples=50, verify_max_length=120)


def accept_task(name, reference, symbols=("a", "b")):
    """A user's acceptance task over ``symbols`` (not registered: the suite's registry stays as it is)."""
    return Task(name=name, family="user", format=Format.ACCEPT, symbols=tuple(symbols), outputs=tuple(symbols),
                sample_input=lambda n, rng: tuple(rng.choice(list(symbols), size=n)),
                answer=lambda x: bool(reference(x)), valid=lambda x: True, train_range=(0, 50),
                bins=((0, 50), (51, 100)), min_length=0)


def brute_force(task, program, max_length=8):
    """The program's outputs equal the reference's on every valid input up to ``max_length``, at every
    offset residue modulo the program's period and at one large offset."""
    checked = check(program)
    examples = [task.example(x) for n in range(0, max_length + 1)
                for x in itertools.product(task.symbols, repeat=n) if task.valid(x)]
    for offset in [*range(checked.info.period), 12345]:
        result = run(checked, [e.tokens for e in examples], offset=offset, alphabet=task.alphabet)
        for row, example in enumerate(examples):
            got = predictions(task, result, row, example)
            assert list(example.targets) == got, (example.tokens, offset, example.targets, got)
    return len(examples)


def found(task, **options):
    result = synthesize(task, SynthesisConfig(**options))
    assert result.program is not None, result.searched
    assert verify(task, result.program).ok
    assert result.text == crasp.format_program(result.program)
    assert result.size == program_size(result.program)
    assert brute_force(task, result.program) > 0
    return result


# ---------------------------------------------------------------- suite tasks


@pytest.mark.parametrize("name", ["tomita_1", "aa_star", "bin_majority", "tomita_7"])
def test_finds_programs_for_small_suite_tasks(name):
    task = tasks.get(name)
    result = found(task, time_limit=30)
    library = program_size(task.program("ape"))
    # sizes (library): tomita_1 7 (7), aa_star 6 (30), bin_majority 26 (16), tomita_7 21 (28). The
    # seq2seq atoms count the input's symbols before the separator (In_0 = #("0" && !Seen), with
    # Seen = #"<sep>" >= 1): 10 nodes more than the library's #"0" and #"1".
    assert result.size <= library + (10 if task.format.value == "seq2seq" else 4)
    assert "PASS" in result.checks and "counterexamples" in result.searched


def test_aa_star_needs_a_periodic_predicate():
    ape = found(tasks.get("aa_star"), time_limit=30)
    assert check(ape.program).info.periods
    nope = synthesize(tasks.get("aa_star"), SynthesisConfig(positions="nope", time_limit=3, max_size=8))
    assert nope.program is None and "nothing found" in nope.searched


def test_progress_lines():
    lines = []
    synthesize(tasks.get("tomita_1"), SynthesisConfig(time_limit=20), progress=lines.append)
    assert lines[0].startswith("round 1/") and "batch of" in lines[0]
    assert "found a program of size 7" in lines[-1]


# ---------------------------------------------------------------- a user's tasks


USER_TASKS = {
    "contains_ab": lambda x: "ab" in "".join(x),
    "ends_with_ab": lambda x: "".join(x).endswith("ab"),
    "more_a_than_b": lambda x: x.count("a") > x.count("b"),
    "first_is_a": lambda x: len(x) > 0 and x[0] == "a",
    "contains_aa": lambda x: "aa" in "".join(x),
}


@pytest.mark.parametrize("name", sorted(USER_TASKS))
def test_finds_programs_for_user_tasks(name):
    result = found(accept_task(name, USER_TASKS[name]), time_limit=30)
    assert check(result.program).accept is not None


def test_a_local_guard_where_one_is_needed():
    ends_ab = found(accept_task("ends_with_ab", USER_TASKS["ends_with_ab"]), time_limit=30)
    assert check(ends_ab.program).info.offsets == {1}
    assert "#[i - j == 1]" in ends_ab.text


def test_more_as_is_the_comparison_of_two_counts():
    result = found(accept_task("more_a_than_b", USER_TASKS["more_a_than_b"]), time_limit=10)
    assert result.text.strip().endswith('accept #"a" > #"b"') and result.size == 5


# ---------------------------------------------------------------- NoPE


@pytest.mark.parametrize("name", ["more_a_than_b", "first_is_a", "contains_ab"])
def test_nope_programs_are_plain(name):
    result = found(accept_task(name, USER_TASKS[name]), positions="nope", time_limit=20)
    info = check(result.program).info
    assert info.plain and not info.periods and not info.offsets
    assert "periods" not in result.searched


def test_nope_suite_task_and_impossible_one():
    result = found(tasks.get("tomita_1"), positions="nope", time_limit=20)
    assert check(result.program).info.plain
    # ends_with_ab needs to look one position back: no plain program up to size 8
    nothing = synthesize(accept_task("ends_with_ab", USER_TASKS["ends_with_ab"]),
                         SynthesisConfig(positions="nope", max_size=8, time_limit=5))
    assert nothing.program is None and nothing.size is None and not nothing.found
    assert "NOPE" in nothing.searched and "complete to size 8" in nothing.searched


# ---------------------------------------------------------------- random programs as tasks


def program_task(program):
    checked = check(program)

    def answer(x):
        return bool(run(checked, [(BOS, *x)], alphabet=[BOS, "a", "b"]).accept[0])

    return accept_task("random_program", answer)


def test_random_programs_are_found():
    """Random small programs (plain, or with local guards of offsets 1..4: translation-invariant, so
    each is itself a solution), taken as acceptance tasks: synthesis finds an equivalent program
    (equal on every input up to length 10, at every offset) for at least 95% of them. Programs that
    are constant on the inputs up to length 4 are skipped (size 1)."""
    outcomes = []
    short = [(BOS, *x) for n in range(5) for x in itertools.product("ab", repeat=n)]
    inputs = [(BOS, *x) for n in range(11) for x in itertools.product("ab", repeat=n)]

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(alphabet=("a", "b"), max_definitions=3, max_depth=2, periodic=False, local=True,
                    outputs="accept"))
    def attempt(program):
        checked = check(program)
        verdicts = run(checked, short, alphabet=[BOS, "a", "b"]).accept
        assume(verdicts.any() and not verdicts.all() and checked.info.offsets <= {1, 2, 3, 4})
        result = synthesize(program_task(program), SynthesisConfig(time_limit=4, max_size=10, **QUICK_VERIFY))
        if result.program is None:
            outcomes.append((False, crasp.format_program(program)))
            return
        reference = run(checked, inputs, alphabet=[BOS, "a", "b"]).accept
        for offset in [*range(check(result.program).info.period), 777]:
            got = run(result.program, inputs, offset=offset, alphabet=[BOS, "a", "b"]).accept
            assert (got == reference).all(), (crasp.format_program(program), result.text, offset)
        outcomes.append((True, expr_size(check(result.program).accept)))

    start = time.perf_counter()
    attempt()
    failed = [text for ok, text in outcomes if not ok]
    assert len(outcomes) >= 40
    assert len(failed) <= 0.05 * len(outcomes), failed
    assert max(size for ok, size in outcomes if ok) >= 4  # not only single tokens
    assert time.perf_counter() - start < 240


# ---------------------------------------------------------------- the naive enumerator, sizes, configuration


def test_naive_enumerator_finds_the_same_program_with_more_candidates():
    task = accept_task("first_is_a", USER_TASKS["first_is_a"])
    smart = synthesize(task, SynthesisConfig(time_limit=20, **QUICK_VERIFY))
    naive = synthesize(task, SynthesisConfig(time_limit=20, equivalence=False, **QUICK_VERIFY))
    assert smart.text == naive.text
    assert naive.candidates > 2 * smart.candidates


def test_sizes_count_ast_nodes():
    program = crasp.parse('A = #[i - j == 1] "a" >= 1\nB = "b" && A\naccept #B > 0')
    assert [expr_size(d.expr) for d in program.definitions] == [5, 3]
    assert program_size(program) == 5 + 3 + 4


def test_configuration_errors():
    for bad in (dict(positions="rope"), dict(max_size=0), dict(time_limit=0), dict(rounds=0),
                dict(periods=(1,)), dict(offsets=(0,))):
        with pytest.raises(SynthesisError):
            SynthesisConfig(**bad)


def test_result_json():
    result = synthesize(accept_task("more_a_than_b", USER_TASKS["more_a_than_b"]), SynthesisConfig(time_limit=10))
    record = result.to_json()
    assert isinstance(result, SynthesisResult)
    assert set(record) >= {"program", "size", "checks", "candidates", "seconds", "searched"}
    assert record["program"] == result.text and record["size"] == 5


def test_the_batch_places_periodic_predicates_at_absolute_positions():
    from tasks.synthesis.evaluator import Batch

    example = tasks.get("aa_star").example(("a", "a"))
    batch = Batch([(example, 0), (example, 1)], (BOS, "a"), seed=0)
    assert batch.local.tolist() == [1, 2, 3, 1, 2, 3]
    assert batch.periodic(2, [0]).tolist() == [False, True, False, True, False, True]
    counts = batch.count(batch.token("a")[None, :])
    assert counts.tolist() == [[0, 1, 2, 0, 1, 2]]
    back = batch.local_count(batch.token(BOS)[None, :], frozenset({1}))
    assert back.tolist() == [[0, 1, 0, 0, 1, 0]]


# ---------------------------------------------------------------- the command


def crasp_command(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_command_json_and_out(tmp_path):
    target = tmp_path / "tomita1.cr"
    status, out, err = crasp_command("synthesize", "tomita_1", "--json", "--out", str(target))
    assert status == 0, err
    record = json.loads(out)
    assert record["size"] == 7 and record["program"] == target.read_text()
    assert record["checks"].startswith("PASS tomita_1") and record["candidates"] > 0 and record["seconds"] > 0
    assert "round 1/" in err  # progress on standard error
    status, out, _ = crasp_command("verify", "tomita_1", "--program", str(target), "--samples", "10")
    assert status == 0 and out.startswith("PASS")


def test_command_text_output():
    status, out, err = crasp_command("synthesize", "tomita_1", "--positions", "nope", "--quiet")
    assert status == 0 and err == ""
    assert 'next "<eos>"' in out and "PASS tomita_1" in out


def test_command_nothing_found():
    status, out, err = crasp_command("synthesize", "parity", "--max-size", "4", "--time", "2")
    assert status == 1 and out == ""
    assert "no APE program found for parity" in err and "searched:" in err and "up to size 4" in err


def test_command_on_a_users_task(tmp_path, monkeypatch):
    (tmp_path / "my_synth_tasks.py").write_text(textwrap.dedent('''
        from tasks.registry import Format, Task

        more_b = Task(name="more_b", family="user", format=Format.ACCEPT, symbols=("a", "b"),
                      outputs=("a", "b"), sample_input=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)),
                      answer=lambda x: x.count("b") > x.count("a"), valid=lambda x: True,
                      train_range=(0, 50), bins=((0, 50),), min_length=0)
    '''))
    monkeypatch.chdir(tmp_path)
    status, out, err = crasp_command("synthesize", "my_synth_tasks:more_b", "--json", "-q")
    sys.modules.pop("my_synth_tasks", None)
    assert status == 0, err
    assert json.loads(out)["program"].strip().endswith('accept #"a" < #"b"')


def test_command_errors():
    status, _, err = crasp_command("synthesize", "no_such_task")
    assert status == 1 and "no task named" in err
    status, _, err = crasp_command("synthesize", "tomita_1", "--max-size", "0")
    assert status == 1 and "max_size" in err


def test_search_space_is_widened_in_rounds():
    from tasks.synthesis.config import schedule

    rounds = schedule(SynthesisConfig())
    assert len(rounds) == 3 and rounds[-1][1] == 1.0
    first, last = rounds[0][0], rounds[-1][0]
    assert set(first.constants) < set(last.constants) and set(first.periods) < set(last.periods)
    assert max(map(max, last.guards)) == 4 and max(last.periods) == 6
    plain = schedule(SynthesisConfig(positions="nope"))
    assert all(not r.periods and not r.guards for r, _ in plain)
    assert np.isclose(sum(b - a for a, b in zip([0] + [e for _, e in rounds], [e for _, e in rounds])), 1.0)


# ---------------------------------------------------------------- atoms and output by output


def seq2seq_task(name, reference, symbols=("a", "b"), outputs=None):
    """A user's seq2seq task (not registered)."""
    return Task(name=name, family="user", format=Format.SEQ2SEQ, symbols=tuple(symbols),
                outputs=tuple(outputs or symbols),
                sample_input=lambda n, rng: tuple(rng.choice(list(symbols), size=n)),
                answer=lambda x: tuple(reference(x)), valid=lambda x: True, train_range=(1, 20),
                bins=((1, 20), (21, 40)), min_length=1)


def atom_reference(atom_name, tokens, k, separator="<sep>"):
    """The atom's value at position k + 1 (0-based k), from its definition in words."""
    prefix = tokens[: k + 1]
    seen = separator in prefix
    if atom_name == "Seen":
        return seen
    if atom_name == "Steps":
        return len(prefix) - tokens.index(separator) if seen else 0
    before = prefix[: prefix.index(separator)] if seen else prefix
    after = prefix[prefix.index(separator):] if seen else ()
    if atom_name == "Length":
        return sum(t not in ("<bos>", separator) for t in before)
    kind, symbol = atom_name.split("_", 1)
    return (before if kind == "In" else after).count(symbol)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from("abc"), min_size=1, max_size=9), st.lists(st.sampled_from("ab1"), max_size=6),
       st.integers(0, 30))
def test_format_atoms_are_what_they_say(x, y, offset):
    from tasks.synthesis.atoms import evaluate, format_atoms
    from tasks.synthesis.evaluator import Batch

    task = seq2seq_task("atoms", sorted, symbols=("a", "b", "c"), outputs=("a", "b", "1"))
    atoms = format_atoms(task)
    assert [a.name for a in atoms] == ["Seen", "Steps", "Length", "In_a", "In_b", "In_c", "Out_a", "Out_b", "Out_1"]
    tokens = ("<bos>", *x, "<sep>", *y)
    example = Example(tokens, (), (), len(x))
    batch = Batch([(example, offset)], task.alphabet, seed=0)
    for atom, values in zip(atoms, evaluate(atoms, batch)):
        assert values.tolist() == [atom_reference(atom.name, tokens, k) for k in range(len(tokens))], atom.name


def test_only_seq2seq_tasks_with_a_separator_get_format_atoms():
    from tasks.synthesis.atoms import format_atoms

    assert format_atoms(tasks.get("tomita_1")) == ()
    assert format_atoms(accept_task("more_a", USER_TASKS["more_a_than_b"])) == ()
    assert format_atoms(tasks.get("xu_addition")) == ()  # no separator
    assert [a.name for a in format_atoms(tasks.get("sort"))] == ["Seen", "Steps", "Length"]  # 150 symbols


def test_a_sort_over_three_symbols_from_the_atoms_and_the_complement():
    task = seq2seq_task("sort3", sorted, symbols=("a", "b", "c"))
    result = found(task, time_limit=60, **QUICK_VERIFY)
    assert result.text.startswith(("Seen = ", 'alphabet {"<bos>"}\nSeen = ')) and "In_a" in result.text
    assert re.search(r'^next "[^"]+" = !\(', result.text, re.M)  # the last found: "none of the others"
    assert check(result.program).info.plain
    lines = []
    synthesize(task, SynthesisConfig(time_limit=60, **QUICK_VERIFY), progress=lines.append)
    assert 1 <= sum("searching the others with it among the atoms" in line for line in lines) <= 3


def test_without_atoms_and_one_output_at_a_time_the_search_is_the_earlier_one():
    """Both switches off: every output is searched at once from the plain leaves (what the
    benchmark compares with), and the programs found are still verified ones."""
    task = seq2seq_task("keep_a", lambda x: [t for t in x if t == "a"])
    plain = found(task, time_limit=60, positions="nope", format_atoms=False, output_by_output=False, **QUICK_VERIFY)
    assert "Seen" not in plain.text and "In_a" not in plain.text
    seeded = found(task, time_limit=60, positions="nope", **QUICK_VERIFY)
    assert "In_a" in seeded.text
