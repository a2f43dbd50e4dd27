"""`<bos>` framing and batches that survive bad lines: ``crasp run`` (interpreted, vectorised and
compiled), :func:`crasp.run` and :func:`limit_transformer.run`.

The reference is always the interpreter run raw on inputs framed by hand (``<bos>`` written out),
and verdict lines are rebuilt here from its arrays, not through the command line's own helpers.
"""

from __future__ import annotations

import io
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp import ast
from crasp.cli import main
from crasp.errors import InputError
from crasp.strategies import programs

BOS = "<bos>"
FIRST_A = 'alphabet {"<bos>", "a", "b"}\nFirst_a = "a" && #[i - j == 1] "<bos>" >= 1\naccept #First_a >= 1\n'
"""Accepts the words whose first symbol is a: it reads ``<bos>``."""
NEXT_FIRST = ('alphabet {"<bos>", "a", "b"}\nAfter = #[i - j == 1] "<bos>" >= 1\n'
              'next "a" = #("a" && After) >= 1\nnext "b" = #("b" && After) >= 1\n')
"""Predicts the first symbol everywhere after it (nothing before it: ``?`` at ``<bos>``)."""


def crasp_cli(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin if stdin is not None else "")
    try:
        status = main(["run", "--no-cache", *argv], out, err)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def expected_lines(program: ast.Program, inputs: list[list[str]], offset: int = 0) -> list[str]:
    """The verdict lines of ``inputs`` as the interpreter gives them raw."""
    result = crasp.run(program, inputs, offset=offset, raw=True, allow_unknown=True)
    lines = []
    for row, tokens in enumerate(inputs):
        if result.accept is not None:
            lines.append("accept" if result.accept[row] else "reject")
            continue
        assert result.next is not None
        cells = []
        for k in range(len(tokens)):
            holding = [t for t, values in result.next.items() if values[row, k]]
            cells.append(holding[0] if len(holding) == 1 else "?")
        lines.append(" ".join(cells))
    return lines


def framed_by_hand(tokens: list[str]) -> list[str]:
    return tokens if tokens[:1] == [BOS] else [BOS, *tokens]


def reading_bos(program: ast.Program) -> ast.Program:
    """``program`` with ``<bos>`` in its alphabet declaration (one is added where it has none)."""
    statements = list(program.statements)
    for k, statement in enumerate(statements):
        if isinstance(statement, ast.Alphabet):
            statements[k] = ast.Alphabet(statement.tokens | {BOS})
            break
    else:
        statements.append(ast.Alphabet(frozenset({BOS})))
    return ast.Program(tuple(statements))


@pytest.fixture
def program_file(tmp_path):
    def write(text: str, name: str = "p.cr") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


# ---------------------------------------------------------------- framing, against the interpreter


@pytest.mark.parametrize("vectorised", [False, True])
def test_random_programs_run_plain_input_as_the_interpreter_runs_it_framed(tmp_path, monkeypatch, vectorised):
    """For random programs that read ``<bos>``, ``crasp run`` on plain lines prints what the
    interpreter gives on the lines with ``<bos>`` written out; ``--raw`` what it gives on the
    lines as they are; a line starting with ``<bos>`` gets no second one."""
    if vectorised:
        monkeypatch.setattr("crasp.cli.PURE_PYTHON_WORK", 0)
    path = tmp_path / "random.cr"
    words = st.lists(st.sampled_from(["a", "b", BOS]), min_size=1, max_size=9)

    @settings(max_examples=25, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(alphabet=("a", "b", BOS), max_definitions=3, max_depth=2).map(reading_bos),
           st.lists(words, min_size=1, max_size=4), st.integers(0, 5))
    def check(program, inputs, offset):
        path.write_text(crasp.format_program(program))
        stdin = "".join(" ".join(tokens) + "\n" for tokens in inputs)
        status, out, err = crasp_cli(str(path), "--allow-unknown", "--offset", str(offset), stdin=stdin)
        assert (status, err) == (0, "")
        assert out.splitlines() == expected_lines(program, [framed_by_hand(t) for t in inputs], offset)
        status, out, _ = crasp_cli(str(path), "--allow-unknown", "--raw", "--offset", str(offset), stdin=stdin)
        assert status == 0 and out.splitlines() == expected_lines(program, inputs, offset)
        status, out, _ = crasp_cli(str(path), "--allow-unknown", "--offset", str(offset), "")  # the empty word
        assert status == 0 and out.splitlines() == expected_lines(program, [[BOS]], offset)

    check()


def test_the_python_api_frames_as_the_command_line_does():
    program = crasp.parse(FIRST_A)
    result = crasp.run(program, ["a b", "<bos> a b", "b a", "", "<bos>"])
    assert result.accept.tolist() == [True, True, False, False, False]
    assert result.tokens == (("<bos>", "a", "b"), ("<bos>", "a", "b"), ("<bos>", "b", "a"), ("<bos>",), ("<bos>",))
    assert result.lengths.tolist() == [3, 3, 3, 1, 1]
    assert crasp.run(program, ["a b"], raw=True).accept.tolist() == [False]
    assert crasp.accepts(program, "a") and not crasp.accepts(program, "a", raw=True)
    traced = crasp.run(program, ["a b"], trace=True).values_at(0)["First_a"].tolist()
    assert traced == [False, True, False]  # position 1 is <bos>


def test_next_programs_predict_at_bos_first(program_file):
    path = program_file(NEXT_FIRST)
    assert crasp_cli(path, "b a a") == (0, "? b b b\n", "")
    assert crasp_cli(path, "--raw", "b a a") == (0, "? ? ?\n", "")
    rows = json.loads(crasp_cli(path, "--json", "b a")[1])
    assert rows == [{"input": ["<bos>", "b", "a"], "next": [None, "b", "b"]}]


def test_a_program_that_does_not_read_bos_runs_its_inputs_as_given(program_file):
    path = program_file('alphabet {"a", "b"}\nA = #"a" == 1 && #true == 2\n')
    assert crasp_cli(path, "a b") == crasp_cli(path, "--raw", "a b") == (0, "accept\n", "")
    assert crasp.run(crasp.parse('alphabet {"a"}\nA = #true == 1'), ["a"]).accept.tolist() == [True]
    status, out, err = crasp_cli(path, "")
    assert (status, out) == (1, "") and "input 1 is empty" in err and "does not read '<bos>'" in err
    with pytest.raises(InputError, match="input 2 is empty.*does not read '<bos>'"):
        crasp.run(crasp.parse(FIRST_A.replace('"<bos>", ', "").replace('#[i - j == 1] "<bos>"', "#true")),
                  ["a", ""])


def test_raw_refuses_the_empty_word_saying_how_to_run_it(program_file):
    path = program_file(FIRST_A)
    status, out, err = crasp_cli(path, "--raw", "")
    assert (status, out) == (1, "")
    assert "input 1 is empty" in err and "with --raw nothing is prepended" in err and "raw=True" not in err
    with pytest.raises(InputError) as caught:
        crasp.run(crasp.parse(FIRST_A), ["a", ""], raw=True)
    assert "input 2 is empty" in str(caught.value) and "with raw=True nothing is prepended" in str(caught.value)
    assert "--raw" not in str(caught.value) and caught.value.index == 1


def test_the_offset_places_bos(program_file):
    path = program_file('alphabet {"<bos>", "a"}\nA = #(i mod 3 == 1 && "<bos>") == 1\n')
    for offset in range(3):
        want = expected_lines(crasp.parse(open(path).read()), [[BOS, "a"]], offset)
        assert crasp_cli(path, "--offset", str(offset), "a")[1].splitlines() == want
    assert crasp_cli(path, "--offset", "0", "a")[1] == "accept\n"


def test_traces_show_the_bos_column_and_name_lines(program_file, tmp_path):
    path = program_file(FIRST_A)
    target = tmp_path / "trace.txt"
    status, out, err = crasp_cli(path, "--trace", str(target), stdin="// words\na b\nx\n\nb\n")
    assert status == 1 and out == "accept\nreject\n" and "line 3, position 1 (column 1)" in err
    text = target.read_text()
    assert "# input 1, line 2\nposition    1      2    3\ntoken       <bos>  a    b" in text
    assert "# input 3, line 5" in text and "line 3" not in text


# ---------------------------------------------------------------- unknown tokens, located in the input as given


def test_python_errors_locate_tokens_in_the_input_as_given(monkeypatch):
    program = crasp.parse(FIRST_A)
    for work in (2_000, 0):  # the pure-Python plan, and numpy
        monkeypatch.setattr("crasp.interpreter.PURE_PYTHON_WORK", work)
        with pytest.raises(InputError) as caught:
            crasp.run(program, ["a b", "<bos> a", "a z"])
        message = str(caught.value)
        assert message.startswith("input 3, position 2: token 'z' is not in the program's alphabet")
        assert message.endswith("allow it with allow_unknown=True") and "--allow-unknown" not in message
        assert (caught.value.index, caught.value.position) == (2, 1)
        with pytest.raises(InputError, match="input 2, position 2: token 'z'"):
            crasp.run(program, ["<bos> a", "<bos> z"])


def test_token_counting_runs_name_the_input_in_error(monkeypatch):
    monkeypatch.setattr("crasp.interpreter.PURE_PYTHON_WORK", 0)
    with pytest.raises(InputError, match="input 2, position 2: token 'z'"):
        crasp.run(crasp.parse('A = #"a" > #"b"'), ["a b", "a z"])


# ---------------------------------------------------------------- batches with bad lines


BATCH = "a b\n// a comment\n\na x b\n<bos>\n   b   z\nb a\n"
"""Good lines 1, 5 and 7; a bad token on line 4 (position 2, column 3) and line 6 (position 2,
column 8); a comment on line 2 and a blank line 3."""


@pytest.mark.parametrize("path", [[], ["--vectorised"], ["--compiled"]])
def test_a_batch_answers_every_good_line_and_names_the_bad_ones(program_file, monkeypatch, path):
    if path == ["--vectorised"]:
        monkeypatch.setattr("crasp.cli.PURE_PYTHON_WORK", 0)
        path = []
    program = program_file(FIRST_A)
    status, out, err = crasp_cli(program, *path, stdin=BATCH)
    assert status == 1
    assert out.splitlines() == expected_lines(crasp.parse(FIRST_A), [[BOS, "a", "b"], [BOS], [BOS, "b", "a"]])
    assert err.splitlines() == [
        "crasp: error: line 4, position 2 (column 3): token 'x' is not in the program's alphabet "
        "('<bos>', 'a', 'b'); allow it with --allow-unknown",
        "crasp: error: line 6, position 2 (column 8): token 'z' is not in the program's alphabet "
        "('<bos>', 'a', 'b'); allow it with --allow-unknown",
    ]
    assert "allow_unknown=True" not in err
    status, out, err = crasp_cli(program, *path, "--json", stdin=BATCH)
    rows = json.loads(out)
    assert status == 1 and err.count("crasp: error: line") == 2
    assert rows == [
        {"input": ["<bos>", "a", "b"], "accept": True},
        {"input": ["a", "x", "b"], "line": 4, "error": err.splitlines()[0].removeprefix("crasp: error: ")},
        {"input": ["<bos>"], "accept": False},
        {"input": ["b", "z"], "line": 6, "error": err.splitlines()[1].removeprefix("crasp: error: ")},
        {"input": ["<bos>", "b", "a"], "accept": False},
    ]
    assert crasp_cli(program, *path, "--allow-unknown", stdin=BATCH)[:2] == (0, "accept\naccept\nreject\nreject\nreject\n")


def test_a_batch_of_only_bad_lines_prints_no_verdict(program_file):
    status, out, err = crasp_cli(program_file(FIRST_A), stdin="x\n\ny y\n")
    assert (status, out) == (1, "") and [line.split(",")[0] for line in err.splitlines()] == \
        ["crasp: error: line 1", "crasp: error: line 3"]
    status, out, err = crasp_cli(program_file(FIRST_A), "--compiled", "--json", stdin="x\n")
    assert status == 1 and json.loads(out)[0]["line"] == 1


def test_a_line_too_long_for_int64_counts_is_named_and_the_others_run(program_file, monkeypatch):
    monkeypatch.setattr("crasp.cli.PURE_PYTHON_WORK", 0)  # the numpy interpreter, which refuses such counts
    program = program_file('alphabet {"b"}\nC = 1000000000000000 * #"a"\nA = C > 0\n')
    long_line = " ".join(["a"] * 5000)
    status, out, err = crasp_cli(program, stdin=f"a\n// long:\n{long_line}\nb\n")
    assert status == 1 and out == "accept\nreject\n"
    assert err.startswith("crasp: error: line 3: counts of this program could exceed int64 on inputs of length 5000")


def test_a_bad_command_line_input_is_still_input_1(program_file):
    status, out, err = crasp_cli(program_file(FIRST_A), "a x")
    assert (status, out) == (1, "") and err.startswith("crasp: error: input 1, position 2: token 'x'")


# ---------------------------------------------------------------- the compiled model


def test_the_compiled_model_frames_as_the_interpreter_does(program_file):
    import limit_transformer

    program = crasp.parse(NEXT_FIRST)
    model = limit_transformer.compile(program, limit_transformer.CompileConfig(max_length=8))
    words = ["b a a", "<bos> a", ""]
    framed = limit_transformer.run(model, words)
    reference = crasp.run(program, [framed_by_hand(w.split()) for w in words], raw=True)
    assert framed.tokens == reference.tokens
    assert [framed.next_tokens(row) for row in range(3)] == [reference.next_tokens(row) for row in range(3)] == \
        [[None, "b", "b", "b"], [None, "a"], [None]]
    raw = limit_transformer.run(model, ["b a a"], raw=True)
    assert raw.next_tokens(0) == crasp.run(program, ["b a a"], raw=True).next_tokens(0) == [None, None, None]
    with pytest.raises(InputError, match="input 1, position 2: token 'z'"):
        limit_transformer.run(model, ["a z"])
    with pytest.raises(InputError, match="9 tokens \\(the prepended <bos> counted\\)"):
        limit_transformer.run(model, [["a"] * 8])
    path = program_file(NEXT_FIRST)
    assert crasp_cli(path, "--compiled", "b a a") == crasp_cli(path, "b a a") == (0, "? b b b\n", "")
    assert crasp_cli(path, "--compiled", "--raw", "b a a") == (0, "? ? ?\n", "")


def shell_examples(markdown: str) -> list[tuple[dict[str, str], list[tuple[str, str]]]]:
    """The fenced shell sessions of a document that start with ``$ cat FILE``: the files they
    show, and each later command with the output it shows."""
    sessions = []
    for block in markdown.split("```")[1::2]:
        lines = [line.strip() for line in block.strip("\n").splitlines()]
        if not lines or not lines[0].startswith("$ cat "):
            continue
        files: dict[str, str] = {}
        commands: list[tuple[str, list[str]]] = []
        for line in lines:
            if line.startswith("$ cat "):
                files[line[len("$ cat "):]] = ""
                commands.append(("", []))
            elif line.startswith("$ "):
                commands.append((line[2:], []))
            else:
                commands[-1][1].append(line)
        shown = iter(files)
        for command, output in list(commands):
            if not command:
                files[next(shown)] = "\n".join(output).strip("\n") + "\n"
        shown_output = [(c, "\n".join(o).strip("\n")) for c, o in commands if c]
        sessions.append((files, [(c, text + "\n" if text else "") for c, text in shown_output]))
    return sessions


def test_the_shell_sessions_of_the_command_line_docs_run_as_shown(tmp_path):
    """docs/cli.md's sessions, run in bash with the installed ``crasp`` (standard error merged,
    as a terminal shows it)."""
    import os
    import pathlib
    import subprocess

    docs = pathlib.Path(__file__).resolve().parents[1] / "docs" / "cli.md"
    sessions = shell_examples(docs.read_text())
    assert sessions, "docs/cli.md shows no session to run"
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for files, commands in sessions:
        for name, text in files.items():
            (tmp_path / name).write_text(text)
        script = "exec 2>&1\n" + "\n".join(f"{command}" for command, _ in commands) + "\n"
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.stdout == "".join(output for _, output in commands), script
