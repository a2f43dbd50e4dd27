"""The Lark-free parser runtime (crasp.lalr) against Lark itself: on every text, either it gives
up (and Lark decides) or it builds exactly Lark's tree, positions included; it gives up on no
program Lark accepts; and crasp.parser uses it without importing Lark."""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

import lark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp import lalr, library, parser, printer
from crasp.strategies import programs

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- a definitional comparison


def lark_view(node):
    """Lark's tree as plain data: rules with their positions, tokens with theirs."""
    if isinstance(node, lark.Tree):
        meta = node.meta
        span = None if meta.empty else (meta.line, meta.column, meta.end_line, meta.end_column)
        return (node.data, span, tuple(lark_view(child) for child in node.children))
    if isinstance(node, lark.Token):
        return ("token", node.type, node.value, node.line, node.column, node.end_line, node.end_column)
    return node


def runtime_view(tables, text):
    """The runtime's result with builders that build the same plain data as :func:`lark_view`."""
    names = {rule[1] for rule in tables[1]}

    def token(value):
        if isinstance(value, lalr.Token):
            return ("token", value.type, value.value, value.line, value.column, value.end_line, value.end_column)
        return value

    builders = {name: (lambda span, children, name=name: (name, span, tuple(token(c) for c in children)))
                for name in names}
    return lalr.parse(tables, text, builders)


def agree(grammar_parser, tables, text) -> str:
    """'both' when both parse ``text`` to the same tree, 'neither' when both refuse it; fails otherwise."""
    try:
        expected = lark_view(grammar_parser.parse(text))
    except lark.exceptions.UnexpectedInput:
        expected = None
    try:
        found = runtime_view(tables, text)
    except lalr.NotParsed:
        found = None
    assert found == expected, f"runtime and Lark differ on {text!r}"
    return "neither" if found is None else "both"


CRASP_LARK = parser._lark()
CRASP_TABLES = lalr.export(CRASP_LARK)


# ---------------------------------------------------------------- the C-RASP grammar


def program_texts() -> list[str]:
    texts = [Path(library.file(name)).read_text(encoding="utf-8") for name in library.names()]
    texts += [path.read_text(encoding="utf-8") for path in sorted(ROOT.rglob("*.cr"))
              if "build" not in path.parts and ".git" not in path.parts]
    return texts


def test_every_stored_program_parses_to_lark_s_tree():
    """The library, the examples and the golden files (those of syntax errors are refused by both)."""
    outcomes = [agree(CRASP_LARK, CRASP_TABLES, text) for text in program_texts()]
    assert outcomes.count("both") > 20 and outcomes.count("neither") >= 5


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(max_depth=4))
def test_random_programs_parse_to_lark_s_tree(program):
    assert agree(CRASP_LARK, CRASP_TABLES, printer.format_program(program)) == "both"


FRAGMENTS = ["A", "B", "i", "j", "x1", "accept", "accepts", "next", "nexts", "alphabet", "mod", "mods", "in",
             "inside", "if", "iff", "else", "true", "false", "truely", "min", "max", "#import", "#imports", "#",
             "=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "!", "&&", "||", "(", ")", "[", "]", "{", "}",
             ",", "0", "7", "-3", "007", '"a"', '"b c"', '"\\""', '"', " ", "\n", "\t", "// note\n", "é", "$"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14))
def test_token_soup_is_refused_or_parsed_alike(fragments):
    agree(CRASP_LARK, CRASP_TABLES, " ".join(fragments))
    agree(CRASP_LARK, CRASP_TABLES, "".join(fragments))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(max_depth=3), st.data())
def test_mutated_programs_are_refused_or_parsed_alike(program, data):
    text = printer.format_program(program)
    for _ in range(data.draw(st.integers(1, 3))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 4)))
        text = text[:start] + data.draw(st.sampled_from(FRAGMENTS + [""])) + text[end:]
    agree(CRASP_LARK, CRASP_TABLES, text)


def test_the_tables_are_plain_data():
    assert marshal.loads(marshal.dumps(CRASP_TABLES)) == CRASP_TABLES


def test_parse_gives_lark_s_program_and_lark_s_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("CRASP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CRASP_NO_CACHE", raising=False)
    text = '#import even\n// c\nC = #[i - j in {1, 2}] ("a" || even) // d\nA = (C + 2) * 3 >= -(#"b") if i mod 3 != 1 else false\n'
    fast = parser._parse_without_lark(text)
    assert fast is not None
    assert fast == parser._parse_with_lark(text, "p")
    assert [s.loc for s in fast] == [s.loc for s in parser._parse_with_lark(text, "p")]
    for bad in ('A = #"a" * #"b"', 'A = #"a" >', 'A = 99999999999999999999999', 'A = #[k - j == 1] "a"'):
        assert parser._parse_without_lark(bad) is None
        with pytest.raises(Exception) as error:
            parser.parse(bad, "p.cr")
        assert "p.cr:1:" in str(error.value)


def test_the_cached_tables_are_used_without_importing_lark(tmp_path):
    code = (
        "import sys; from crasp.parser import parse; parse('C = #\"a\"\\nA = C >= 2 && i mod 2 == 0');"
        "print('lark' in sys.modules)"
    )
    env = {"CRASP_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert (first.stdout.strip(), second.stdout.strip()) == ("True", "False")


def test_damaged_tables_fall_back_to_lark(monkeypatch, tmp_path):
    monkeypatch.setenv("CRASP_CACHE_DIR", str(tmp_path))
    states, rules, lexer_of_state, lexers, start, end = CRASP_TABLES
    broken = ({state: {} for state in states}, rules, lexer_of_state, lexers, start, end)
    with pytest.raises(lalr.NotParsed):
        lalr.parse(broken, 'A = #"a" > 1', parser._SPAN_BUILDERS)
    monkeypatch.setattr(parser, "_tables", lambda: broken)
    assert list(parser.parse('A = #"a" > 1').statements) == parser._parse_with_lark('A = #"a" > 1', "p")


# ---------------------------------------------------------------- other grammars: what the export reproduces


FEATURES = r"""
start: _item*
_item: let | show | pair
let: "let" NAME "=" value
show: "show" [NAME] ("," NAME)* "."
pair: "(" value "," value ")"
?value: NAME | NUMBER -> number | "(" value ")" | "-" value -> neg | ref
ref: "@" NAME
NAME: /[a-z]+/
NUMBER: /[0-9]+/
%ignore /[ \n]+/
%ignore /#[^\n]*/
"""


@pytest.mark.parametrize("placeholders", [True, False])
def test_a_grammar_with_keywords_placeholders_inlining_and_pass_through(placeholders):
    grammar = lark.Lark(FEATURES, parser="lalr", propagate_positions=True, maybe_placeholders=placeholders)
    tables = lalr.export(grammar)
    accepted = 0
    for text in ["let let = show", "let x = ((y))\nshow .", "show let, show.", "(1, -(@ let))", "",
                 "# c\nlet a = (((-7)))  # d\n", "show , a .", "let show = let", "show show", "let = 1"]:
        accepted += agree(grammar, tables, text) == "both"
    assert accepted == 8


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["let", "show", "x", "letx", "=", ",", ".", "(", ")", "-", "@", "12", "#",
                                 " ", "\n", "!"]), max_size=12))
def test_a_grammar_with_keywords_random_texts(words):
    grammar = lark.Lark(FEATURES, parser="lalr", propagate_positions=True, maybe_placeholders=True)
    agree(grammar, lalr.export(grammar), " ".join(words))


def test_options_it_does_not_reproduce_are_refused():
    with pytest.raises(lalr.Unsupported):
        lalr.export(lark.Lark(FEATURES, parser="lalr"))  # no positions
    with pytest.raises(lalr.Unsupported):
        lalr.export(lark.Lark(FEATURES, parser="lalr", propagate_positions=True, lexer="basic"))
    with pytest.raises(lalr.Unsupported):
        lalr.export(lark.Lark(FEATURES, parser="lalr", propagate_positions=True,
                              lexer_callbacks={"NAME": lambda token: token}))
