"""Golden tests of error messages: each tests/golden/errors/NAME.cr fails as NAME.err says.

Set UPDATE_GOLDEN=1 to rewrite the .err files after an intended change, then review the diff.
"""

import os
from pathlib import Path

import pytest

import crasp
from crasp.errors import SourceError

GOLDEN = Path(__file__).parent / "golden" / "errors"
CASES = sorted(p.stem for p in GOLDEN.glob("*.cr"))


def render(path: Path) -> str:
    try:
        crasp.check(crasp.parse_file(path))
    except crasp.CraspError as error:
        return f"{type(error).__name__}\n{error}\n"
    return "no error\n"


def test_enough_kinds_of_malformed_program():
    assert len(CASES) >= 15


@pytest.mark.parametrize("name", CASES)
def test_error_message(name, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    actual = render(Path(f"{name}.cr"))
    expected_file = GOLDEN / f"{name}.err"
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", CASES)
def test_errors_are_located_with_source_line(name):
    text = (GOLDEN / f"{name}.cr").read_text(encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        crasp.check(crasp.parse(text, source="prog.cr"))
    error = caught.value
    assert error.source == "prog.cr"
    if error.loc is not None:
        assert error.source_line == text.splitlines()[error.line - 1]
        assert str(error).startswith(f"prog.cr:{error.line}:{error.column}: ")


def test_syntax_errors_say_what_was_expected():
    with pytest.raises(crasp.CraspSyntaxError) as caught:
        crasp.parse('A = #"a" >=\n')
    assert "a name" in caught.value.expected
    assert (caught.value.line, caught.value.column) == (1, 12)
