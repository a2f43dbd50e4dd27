"""The builder produces the same ASTs as the parser; traces show every definition."""

import pytest

from crasp import builder as b
from crasp import check, format_program, parse, run
from crasp.library import load
from crasp.trace import html_page, trace


def test_builder_equals_parsed_source():
    pb = b.ProgramBuilder()
    opens = pb.let("C_open", b.count(b.tok("(")))
    closes = pb.let("C_close", b.count(b.tok(")")))
    bad = pb.let("V", opens < closes)
    pb.let("D", (b.count(bad) == 0) & (opens == closes))
    assert pb.build() == load("dyck1")


def test_builder_covers_every_construct():
    pb = b.ProgramBuilder()
    prev = pb.import_("pos_even")
    c = pb.let("C", 2 * b.count(b.tok("a"), guard=b.offsets(1, 2)) - b.count(prev, guard="pred4") + 1)
    m = pb.let("M", b.minimum(c, 3) + b.maximum(-c, b.const(0)) + b.where(b.tok("a") | ~prev, c, 0))
    pb.let("P", b.periodic(3, [0]) & (m != 2) & True)
    pb.accept(b.ref("P") | b.one_of(["a", "b"]))
    program = pb.build()
    expected = parse(
        '#import pos_even\nC = 2 * #[i - j in {1, 2}] "a" - #[pred4] pos_even + 1\n'
        "M = min(C, 3) + max(-1 * C, 0) + (C if \"a\" || !pos_even else 0)\n"
        'P = i mod 3 in {0} && M != 2 && true\naccept P || ("a" || "b")\n'
    )
    assert program == expected


def test_builder_refuses_python_truthiness_and_nonlinear_products():
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(b.tok("a"))
    with pytest.raises(TypeError, match="integer constants only"):
        b.count(b.tok("a")) * b.count(b.tok("b"))


def test_folds():
    assert b.all_of([]).node == b.lift(True).node
    assert b.sum_of([b.const(1), b.const(2)]).node == parse("A = 1 + 2").definitions[0].expr


def test_trace_rows_match_run_values():
    program = load("anbncn")
    t = trace(program, "a a b b c c")
    values = run(program, ["a a b b c c"], trace=True).values_at(0)
    for row in t.rows[:-1]:
        assert list(row.values) == values[row.name].astype(int).tolist()
    assert t.rows[-1].name == "accept" and t.verdict is True


def test_trace_html_and_notebook_view():
    t = trace(load("dyck1"), "( ) ) (")
    page = html_page([t])
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page and "C_open" in page
    assert "title='C_open &lt; C_close'" in t.to_html()
    assert t._repr_html_().startswith("<style>")


def test_long_traces_are_abridged():
    t = trace(load("dyck1"), " ".join(["(", ")"] * 500))
    text = t.to_text(max_positions=20)
    assert "…" in text and "1000" in text and len(text.splitlines()[0].split()) == 22


def test_next_outputs_in_trace():
    t = trace(parse('A = #"a" > #"b"\nnext "a" = A\nnext "b" = !A'), "a b b")
    assert [row.name for row in t.rows] == ["A", 'next "a"', 'next "b"'] and t.verdict is None


def test_builder_program_formats_and_checks():
    program = b.ProgramBuilder()
    x = program.let(None, b.count(b.tok("x")))
    program.accept(x >= 2)
    assert format_program(program.build()) == '_t1 = #"x"\naccept _t1 >= 2\n'
    assert check(program.build()).accept is not None
