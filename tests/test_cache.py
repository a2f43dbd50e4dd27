"""The command line's program cache (crasp.cache) and its fast path: a program seen before runs
without the parser, the AST or numpy, gives what a fresh check gives, and a damaged, concurrent or
unwritable cache changes nothing but speed."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crasp import cache, cli
from crasp.cli import main

PROGRAM = 'C = #"a" - #"b"\nA = C == 0\n'
NEXT_PROGRAM = 'alphabet {"a", "b"}\nC = #"a"\nnext "a" = C < 2\nnext "b" = C >= 1\n'


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CRASP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CRASP_NO_CACHE", raising=False)
    return tmp_path / "cache"


def crasp(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        status = main(list(argv), out, err)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "grammar.lark-tables")


def test_a_program_seen_before_gives_what_a_fresh_check_gives(folder, tmp_path):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    lines = "a b\na a b\nb a b a\n"
    first = crasp("run", str(program), stdin=lines)
    assert first == (0, "accept\nreject\naccept\n", "")
    assert [p.suffix for p in entries(folder)] == [".plan"]
    assert crasp("run", str(program), stdin=lines) == first
    assert crasp("run", str(program), "--no-cache", stdin=lines) == first
    for command in (["check", str(program)], ["check", "--json", str(program)], ["fmt", str(program)]):
        fresh = crasp(*command, "--no-cache")
        assert crasp(*command) == fresh and crasp(*command) == fresh
    assert {p.suffix for p in entries(folder)} == {".plan", ".summary", ".format"}
    assert json.loads(crasp("check", "--json", str(program))[1])["source"] == str(program)


def test_the_summary_names_the_file_it_was_asked_about(folder, tmp_path):
    one, two = tmp_path / "one.cr", tmp_path / "two.cr"
    one.write_text(PROGRAM)
    two.write_text(PROGRAM)
    assert json.loads(crasp("check", "--json", str(one))[1])["source"] == str(one)
    assert json.loads(crasp("check", "--json", str(two))[1])["source"] == str(two)


def test_next_token_programs_and_offsets_and_unknown_tokens(folder, tmp_path):
    program = tmp_path / "n.cr"
    program.write_text(NEXT_PROGRAM)
    for argv in (["b", "a", "a"], ["--offset", "3", "a", "b"]):
        fresh = crasp("run", str(program), "--no-cache", *argv)
        assert crasp("run", str(program), *argv) == crasp("run", str(program), *argv) == fresh
    status, _, err = crasp("run", str(program), stdin="a b\na c b\n")
    assert status == 1 and "input 2, position 2: token 'c'" in err
    assert crasp("run", str(program), "--allow-unknown", "b", "c") == (0, "a a\n", "")


def test_an_edited_program_is_checked_anew(folder, tmp_path):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    assert crasp("run", str(program), "a", "b")[1] == "accept\n"
    program.write_text(PROGRAM.replace("== 0", "== 1"))
    assert crasp("run", str(program), "a", "b")[1] == "reject\n"
    program.write_text(PROGRAM.replace("== 0", "== C +"))  # now a syntax error, never kept
    for _ in range(2):
        status, _, err = crasp("run", str(program), "a")
        assert status == 1 and f"{program}:2:" in err
    assert len(entries(folder)) == 2


def test_a_damaged_entry_is_ignored_and_replaced(folder, tmp_path):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    crasp("run", str(program), "a", "b")
    (entry,) = entries(folder)
    good = entry.read_bytes()
    for damage in (b"", good[:-3], good[:20] + bytes([good[20] ^ 1]) + good[21:], b"\x00" * 200,
                   cache.MAGIC + b"\x00" * 16 + b"\xff"):
        entry.write_bytes(damage)
        assert crasp("run", str(program), "a", "b") == (0, "accept\n", "")
        assert entry.read_bytes() == good


def test_no_cache_at_all_when_the_folder_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CRASP_CACHE_DIR", str(blocker / "cache"))
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    assert crasp("run", str(program), "a", "b") == (0, "accept\n", "")
    assert crasp("run", str(program), "a", "b") == (0, "accept\n", "")
    monkeypatch.setenv("CRASP_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("CRASP_NO_CACHE", "1")
    assert crasp("run", str(program), "a", "b") == (0, "accept\n", "")
    assert not (tmp_path / "off").exists()


def _writer(directory: str, rounds: int, seed: int) -> None:
    os.environ["CRASP_CACHE_DIR"] = directory
    for k in range(rounds):
        value = (seed, k, "x" * (k % 50))
        cache.store("plan", "the same program", value)
        found = cache.load("plan", "the same program")
        assert found is None or (isinstance(found, tuple) and found[2] == "x" * (found[1] % 50))


def test_concurrent_writers_never_leave_a_partial_entry(tmp_path, monkeypatch):
    directory = str(tmp_path / "cache")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(directory, 200, seed)) for seed in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    monkeypatch.setenv("CRASP_CACHE_DIR", directory)
    assert cache.load("plan", "the same program")[1] == 199
    assert not [p for p in Path(directory).rglob("*.tmp")]


def test_long_inputs_take_numpy_and_agree(folder, tmp_path, monkeypatch):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    lines = "".join(" ".join("ab"[(k * 7 + j) % 3 % 2] for j in range(k + 1)) + "\n" for k in range(30))
    pure = crasp("run", str(program), stdin=lines)
    monkeypatch.setattr(cli, "PURE_PYTHON_WORK", 0)
    assert crasp("run", str(program), stdin=lines) == pure


def _imports_after(argv: list[str], cwd: Path, env: dict) -> dict:
    code = ("import sys, json\nfrom crasp.cli import main\nstatus = main(sys.argv[1:])\n"
            "print(json.dumps({m: m in sys.modules for m in ('lark', 'numpy', 'crasp.ast', 'importlib.metadata', 'argparse', 'typing')}))")
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_warm_run_loads_neither_the_parser_nor_numpy(tmp_path):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    env = {**os.environ, "CRASP_CACHE_DIR": str(tmp_path / "cache")}
    cold = _imports_after(["run", str(program), "a", "b"], tmp_path, env)
    assert cold["lark"] and cold["crasp.ast"]
    for argv in (["run", str(program), "a", "b"], ["check", str(program)], ["fmt", str(program)]):
        _imports_after(argv, tmp_path, env)
        warm = _imports_after(argv, tmp_path, env)
        assert not any(warm[m] for m in ("lark", "numpy", "crasp.ast", "importlib.metadata")), argv
    plain = _imports_after(["run", str(program), "a", "b"], tmp_path, env)
    assert not plain["argparse"]  # a run without options is read without argparse
    version = _imports_after(["--version"], tmp_path, env)
    assert not version["importlib.metadata"] and not version["lark"]
