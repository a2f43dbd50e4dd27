"""Bad and extreme inputs get a clear error or the right answer: depth, size, flags, streams.

Programs at the nesting limit go through every pass and agree with the naive evaluator; large
moduli and windows are checked against their definitions (positions mod m, counts over a window)
at positions and sizes that an enumerating implementation could not reach.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp import ast
from crasp import builder as b
from crasp.checker import check
from crasp.cli import main
from crasp.errors import CraspSyntaxError, StaticError
from crasp.interpreter import run
from crasp.intsets import SMALL, IntSet
from crasp.limits import MAX_LITERAL, MAX_NESTING
from crasp.parser import parse
from crasp.printer import format_program
from tests.reference import naive_accepts

ROOT = Path(__file__).resolve().parents[1]


def _crasp(*args: str, stdin=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), out, err)
    return status, out.getvalue(), err.getvalue()


def _depth(program: ast.Program) -> int:
    deepest = 0
    for definition in program.definitions:
        stack = [(definition.expr, 1)]
        while stack:
            node, level = stack.pop()
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in ast.children(node))
    return deepest


# Each shape, given n, nests about n levels deep.
SHAPES = {
    "not": lambda n: "A = " + "!" * n + '(#"a" > 0)',
    "and": lambda n: "A = " + " && ".join(['#"a" > 0'] * n),
    "sum": lambda n: "A = " + " + ".join(['#"a"'] * n) + " > 3",
    "min": lambda n: "A = " + 'min(#"a", ' * n + '#"b"' + ")" * n + " > 0",
    "if": lambda n: "A = (" + "".join(f'{k} if #"a" > {k} else ' for k in range(n)) + "0) > 1",
    "count": lambda n: "A = " + "#(" * n + '#"a"' + " > 0)" * n + " > 0",
}


def _deepest_accepted(shape) -> str:
    """The shape at exactly MAX_NESTING levels (depth grows linearly in n: read off two small ones)."""
    small, larger = _depth(parse(shape(10))), _depth(parse(shape(20)))
    per_step = (larger - small) // 10
    return shape(10 + (MAX_NESTING - small) // per_step)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_pass_works_at_the_nesting_limit_and_refuses_beyond(name):
    text = _deepest_accepted(SHAPES[name])
    program = parse(text)
    assert MAX_NESTING - 2 <= _depth(program) <= MAX_NESTING
    checked = check(program)
    assert parse(format_program(program)) == program
    inputs = [["a", "b", "a"], ["b"], ["a", "a", "a", "b"]]
    if name == "count":  # the naive evaluator takes length^depth steps on nested counts
        inputs = [["a"], ["b"]]
    result = run(checked, inputs, alphabet=["b"])
    assert result.accept.tolist() == [naive_accepts(program, x) for x in inputs]
    with pytest.raises(CraspSyntaxError, match=f"nested deeper than {MAX_NESTING}") as caught:
        parse(SHAPES[name](4 * MAX_NESTING), source="deep.cr")
    assert caught.value.line == 1 and caught.value.column > 1
    assert str(caught.value).startswith("deep.cr:1:")


def test_compiled_model_agrees_at_the_nesting_limit():
    from limit_transformer import CompileConfig, compile
    from limit_transformer.runner import run as run_compiled

    for name in ("not", "and"):
        program = parse(_deepest_accepted(SHAPES[name]))
        model = compile(program, CompileConfig(max_length=8))
        inputs = [["a"], ["a", "b"], ["b", "b"]]
        got = run_compiled(model, inputs, allow_unknown=True).accept.tolist()
        assert got == run(program, inputs, alphabet=["b"]).accept.tolist()


def test_built_programs_deeper_than_the_limit_are_refused_by_the_checker():
    expr = b.count(b.tok("a")) > 0
    for _ in range(MAX_NESTING + 5):
        expr = ~expr
    program = ast.Program((ast.Definition("A", expr.node),))
    with pytest.raises(StaticError, match="nested deeper"):
        check(program)


@pytest.mark.parametrize("literal", ["1" + "0" * 4300, "9" * 5000, str(MAX_LITERAL + 1)])
def test_huge_literals_are_located_errors(literal):
    with pytest.raises(CraspSyntaxError, match="out of range") as caught:
        parse(f'A = #"a" > {literal}', source="big.cr")
    assert (caught.value.line, caught.value.column) == (1, 12)
    assert len(str(caught.value).splitlines()[1]) < 120  # the excerpt is cut around the error


def test_the_largest_literal_is_accepted():
    program = parse(f'A = #"a" < {MAX_LITERAL} && i mod {MAX_LITERAL} == {MAX_LITERAL - 1}')
    assert run(program, ["a"], offset=MAX_LITERAL - 2).accept.tolist() == [True]


# ---------------------------------------------------------------- symbolic moduli and windows

OPS = ["<", "<=", "==", "!=", ">=", ">"]
COMPARE = {op: f for op, f in ast.COMPARISONS.items()}


@settings(max_examples=60, deadline=None)
@given(
    modulus=st.one_of(st.integers(1, 20), st.integers(2**16, 10**18)),
    op=st.sampled_from(OPS),
    bound_share=st.floats(0, 1),
    offset=st.integers(0, 2**62 - 100),
    length=st.integers(1, 12),
)
def test_periodic_comparisons_match_their_definition(modulus, op, bound_share, offset, length):
    residue = int(bound_share * (modulus - 1))
    program = parse(f"A = i mod {modulus} {op} {residue}\n")
    result = run(program, [["a"] * length], offset=offset, trace=True, allow_unknown=True)
    got = result.values_at(0)["A"].tolist()
    want = [COMPARE[op]((offset + k) % modulus, residue) for k in range(1, length + 1)]
    if op == "==":
        want = [(offset + k) % modulus == residue for k in range(1, length + 1)]
    assert got == want
    assert parse(format_program(program)) == program


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.lists(st.sampled_from("ab"), min_size=1, max_size=30),
    op=st.sampled_from(["<", "<=", "=="]),
    bound=st.one_of(st.integers(0, 40), st.just(10**10), st.just(MAX_LITERAL)),
)
def test_windows_match_their_definition(tokens, op, bound):
    program = parse(f'C = #[i - j {op} {bound}] "a"\nA = C > 0\n')
    got = run(program, [tokens], trace=True, alphabet="b").values_at(0)["C"].tolist()
    want = [sum(1 for j in range(1, i + 1) if tokens[j - 1] == "a" and COMPARE[op](i - j, bound))
            for i in range(1, len(tokens) + 1)]
    assert got == want


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(st.sampled_from("ab"), min_size=1, max_size=25),
    offsets=st.sets(st.integers(0, 30), max_size=12),
)
def test_offset_sets_with_gaps_match_their_definition(tokens, offsets):
    program = ast.Program((ast.Definition("C", ast.Count(ast.TokenIs("a"), ast.OffsetSet(frozenset(offsets)))),
                           ast.Definition("A", ast.Compare(">", ast.Ref("C"), ast.Const(0)))))
    got = run(program, [tokens], trace=True, alphabet="b").values_at(0)["C"].tolist()
    want = [sum(1 for j in range(1, i + 1) if tokens[j - 1] == "a" and i - j in offsets)
            for i in range(1, len(tokens) + 1)]
    assert got == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 20)), max_size=6),
       st.lists(st.integers(-60, 60), max_size=30))
def test_intset_agrees_with_frozenset(spans, probes):
    values = {v for start, width in spans for v in range(start, start + width)}
    intset = IntSet((start, start + width) for start, width in spans)
    assert intset == frozenset(values) and len(intset) == len(values) and sorted(intset) == sorted(values)
    assert intset.contains(np.array(probes, dtype=np.int64)).tolist() == [p in values for p in probes]
    if values:
        assert (intset.min(), intset.max()) == (min(values), max(values))
        assert intset.complement(-60, 60) == frozenset(set(range(-60, 60)) - values)
    if len(values) <= SMALL:  # small sets mix with frozensets as dict keys
        assert hash(intset) == hash(frozenset(values))


def test_huge_moduli_and_windows_check_and_run_at_once():
    for text in ["A = i mod 10000000000 >= 1", 'A = #[i - j < 10000000000] "a" > 0',
                 'A = #[i - j == 10000000000] "a" > 0', "A = i mod 1000000000000 == 1",
                 "A = i mod 10007 == 1 && i mod 10009 == 2"]:
        checked = check(parse(text))
        run(checked, [["a"] * 50], offset=10**12 - 3, allow_unknown=True)
    # p = 10^12 - 3 + k is 1 mod 10^12 at k = 4.
    result = run(parse("A = i mod 1000000000000 == 1"), [["a"] * 4, ["a"] * 3], offset=10**12 - 3,
                 allow_unknown=True)
    assert result.accept.tolist() == [True, False]


# ---------------------------------------------------------------- compile states its size first


@pytest.mark.parametrize("text,flag", [
    ("A = i mod 10007 == 1 && i mod 10009 == 2", "--max-period"),
    ('A = #[i - j < 10000000000] "a" > 0', "--max-local-offsets"),
    ('A = #[i - j == 10000000000] "a" > 0', "--max-window"),
])
def test_compile_refuses_a_model_beyond_its_limits_with_the_size_and_the_flag(tmp_path, text, flag):
    program = tmp_path / "big.cr"
    program.write_text(text + "\n")
    status, _, err = _crasp("compile", str(program), "--verify-length", "8", "--count", "2")
    assert status == 1 and err.startswith(f"crasp: error: {program}: ") and flag in err
    assert "Traceback" not in err


def test_compile_limits_can_be_raised():
    from limit_transformer import CompileConfig, compile
    from limit_transformer.compiler import CompileError

    program = parse("A = i mod 300 == 1 && i mod 7 == 2")
    with pytest.raises(CompileError, match="2100 rows"):
        compile(program, CompileConfig(max_length=8, max_period=2000))
    assert compile(program, CompileConfig(max_length=8, max_period=2100)).spec.period == 2100


# ---------------------------------------------------------------- flags, streams, the exit path


@pytest.mark.parametrize("args,flag", [
    (["run", "dyck1", "--offset", "-1", "("], "--offset"),
    (["run", "dyck1", "--offset", str(10**30), "("], "--offset"),
    (["compile", "dyck1", "--count", "-1"], "--count"),
    (["compile", "dyck1", "--seed", "-5"], "--seed"),
    (["compile", "dyck1", "--max-period", "0"], "--max-period"),
    (["verify", "bin_majority", "--samples", "-3"], "--samples"),
    (["verify", "bin_majority", "--max-length", "-1"], "--max-length"),
    (["predict", "--all", "--family", "nosuch"], "--family"),
])
def test_out_of_range_flags_are_usage_errors_naming_the_flag(args, flag):
    status, out, err = _crasp(*args)
    assert status == 2 and flag in err and "Traceback" not in err and out == ""


def test_fmt_in_place_refuses_a_library_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = _crasp("fmt", "-i", "dyck1")
    assert status == 2 and "library program" in err
    assert list(tmp_path.iterdir()) == []


def test_closed_stdin_is_an_error(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    status, _, err = _crasp("run", "dyck1")
    assert status == 1 and "standard input is closed" in err


def test_a_closed_stdout_is_a_failure_not_a_silent_success():
    out, err = io.StringIO(), io.StringIO()
    out.close()
    assert main(["check", "dyck1"], out, err) == 1
    assert "output was lost" in err.getvalue()


def test_closed_stdout_and_ascii_terminal_in_a_real_process(tmp_path):
    program = tmp_path / "accent.cr"
    program.write_text('A = #"é" > 0\n', encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run([sys.executable, "-m", "crasp", "check", str(program)], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "\\xe9" in done.stdout, done.stderr
    closed = subprocess.run(f'"{sys.executable}" -m crasp check dyck1 >&-', shell=True, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert closed.returncode == 1 and "output was lost" in closed.stderr


def test_an_unexpected_exception_is_one_bug_line_naming_the_version(monkeypatch):
    import crasp.cli as cli

    def broken(args, out, err):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli, "cmd_check", broken)
    status, _, err = _crasp("check", "dyck1")
    assert status == 1 and err.startswith("crasp: internal error: ZeroDivisionError")
    assert "crasp-lengthgen" in err and "report" in err and "Traceback" not in err


def test_a_byte_order_mark_and_crlf_line_ends_are_read_as_text(tmp_path):
    from crasp.parser import parse_file

    program = tmp_path / "bom.cr"
    program.write_bytes(b'\xef\xbb\xbfA = #"a" > 0\r\nB = A\r\n')
    assert parse_file(program) == parse('A = #"a" > 0\nB = A\n')
    binary = tmp_path / "binary.cr"
    binary.write_bytes(bytes(range(128, 256)))
    status, _, err = _crasp("check", str(binary))
    assert status == 1 and "not UTF-8" in err
