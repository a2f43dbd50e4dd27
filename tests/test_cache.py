"""The command line's program cache (crasp.cache) and its fast path: a program seen before runs
without the parser, the AST or numpy, gives what a fresh check gives, and a damaged, concurrent or
unwritable cache changes nothing but speed."""

from __future__ import annotations

import io
import json
import marshal
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
    monkeypatch.delenv(cache.LIMIT_VARIABLE, raising=False)
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
    """The programs' entries: not the parser's tables (kept by whichever test parses first in a
    process), nor the running total."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".lalr"
                  and p.name not in (cache.LARK_TABLES, cache.USAGE))


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
    status, out, err = crasp("run", str(program), stdin="a b\na c b\n")
    assert status == 1 and "line 2, position 2 (column 3): token 'c'" in err and out == "? ?\n"
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


# ---------------------------------------------------------------- the size limit


VALUE = "x" * 1000
SIZE = len(cache.MAGIC) + 16 + len(marshal.dumps(VALUE))
"""The bytes an entry holding VALUE takes."""


def kept(*names: str) -> list[str]:
    """Which of the programs ``names`` have a plan entry (looked at without a hit)."""
    return [name for name in names if os.path.exists(cache.path("plan", name))]


def used_at(name: str, seconds: int) -> None:
    os.utime(cache.path("plan", name), ns=(seconds * 10**9, seconds * 10**9))


def test_a_write_past_the_limit_evicts_the_least_recently_used_entries(folder, monkeypatch):
    monkeypatch.setenv(cache.LIMIT_VARIABLE, str(4 * SIZE))  # four entries fit
    for second, name in enumerate("abcd", 1):
        cache.store("plan", name, VALUE)
        used_at(name, second)  # written in this order, a second apart
    assert kept(*"abcd") == list("abcd")
    assert cache.load("plan", "a") == VALUE  # a hit: "a" is now the most recently used
    cache.store("plan", "e", VALUE)  # five entries: trimmed to 90% of the limit, the oldest out
    assert kept(*"abcde") == ["a", "d", "e"]
    assert (folder / cache.USAGE).read_text() == str(3 * SIZE)
    assert [kind for _, kind, _, _ in cache.entries()] == ["plan"] * 3


def test_modification_times_alone_decide_what_goes(folder, monkeypatch):
    monkeypatch.setenv(cache.LIMIT_VARIABLE, str(3 * SIZE))
    for name, second in zip("abc", (30, 10, 20)):
        cache.store("plan", name, VALUE)
        os.utime(cache.path("plan", name), ns=(0, second * 10**9))  # access times play no part
    cache.store("plan", "d", VALUE)
    assert kept(*"abcd") == ["a", "d"]  # b (10 s), then c (20 s) went


def test_a_value_larger_than_the_limit_is_not_kept(folder, monkeypatch):
    monkeypatch.setenv(cache.LIMIT_VARIABLE, str(SIZE - 1))
    cache.store("plan", "a", VALUE)
    assert kept("a") == [] and cache.load("plan", "a") is None
    monkeypatch.setenv(cache.LIMIT_VARIABLE, "0")
    cache.store("plan", "b", "")
    assert kept("b") == []


def test_the_folder_is_counted_only_when_it_passes_the_limit(folder, monkeypatch):
    monkeypatch.setenv(cache.LIMIT_VARIABLE, str(10 * SIZE))
    counted = []
    trim = cache.trim
    monkeypatch.setattr(cache, "trim", lambda bound=None: counted.append(bound) or trim(bound))
    cache.store("plan", "a", VALUE)  # no running total yet: the folder is counted
    assert counted == [10 * SIZE] and (folder / cache.USAGE).read_text() == str(SIZE)
    for name in "bcd":
        cache.store("plan", name, VALUE)
    cache.store("plan", "a", VALUE)  # replacing an entry adds nothing
    assert len(counted) == 1 and (folder / cache.USAGE).read_text() == str(4 * SIZE)
    (folder / cache.USAGE).write_text("damaged")
    cache.store("plan", "e", VALUE)
    assert len(counted) == 2 and (folder / cache.USAGE).read_text() == str(5 * SIZE)


def test_a_malformed_limit_is_reported_and_writes_use_the_default(folder, monkeypatch):
    monkeypatch.setenv(cache.LIMIT_VARIABLE, "a lot")
    with pytest.raises(cache.CacheError, match="CRASP_CACHE_SIZE: 'a lot' is not a size"):
        cache.limit()
    cache.store("plan", "a", VALUE)
    assert cache.load("plan", "a") == VALUE
    for text in ("-1", "1e9", "nanK", "infM", "", "K"):
        with pytest.raises(ValueError, match="is not a size"):
            cache.parse_size(text)
    assert [cache.parse_size(text) for text in ("0", " 2k ", "3 MiB", "1g", "1.5T")] == [
        0, 2048, 3 * 2**20, 2**30, 3 * 2**39]


def test_trim_and_clear_leave_files_the_cache_did_not_write(folder, monkeypatch):
    cache.store("plan", "a", VALUE)
    strangers = [folder / "notes.txt", folder / "ab" / "readme", folder / "zz" / ("0" * 38 + ".plan")]
    for stranger in strangers:
        stranger.parent.mkdir(parents=True, exist_ok=True)
        stranger.write_text("not an entry")
    leftover = Path(cache.path("plan", "b") + ".123.abc.tmp")  # a writer that died
    leftover.parent.mkdir(parents=True, exist_ok=True)
    leftover.write_bytes(b"partial")
    assert [kind for _, kind, _, _ in cache.entries()] == ["plan"]
    assert cache.trim(0) == (1, SIZE)
    cache.store("plan", "a", VALUE)
    assert cache.clear() == (1, SIZE + len(b"partial"))
    assert all(stranger.exists() for stranger in strangers) and not leftover.exists()
    assert not (folder / cache.USAGE).exists() and cache.clear() == (0, 0)


# ---------------------------------------------------------------- crasp cache info and clear


def test_cache_info_as_json(folder, tmp_path, monkeypatch):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    assert crasp("run", str(program), "a", "b")[0] == 0 and crasp("check", str(program))[0] == 0
    status, out, err = crasp("cache", "info", "--json")
    assert (status, err) == (0, "")
    info = json.loads(out)
    assert list(info) == ["folder", "entries", "bytes", "limit", "limit_from", "enabled", "kinds"]
    files = [p for p in folder.rglob("*") if p.is_file() and p.name != cache.USAGE]
    assert info["folder"] == str(folder) and info["entries"] == len(files)
    assert info["bytes"] == sum(p.stat().st_size for p in files)
    assert (info["limit"], info["limit_from"], info["enabled"]) == (cache.DEFAULT_LIMIT, "default", True)
    assert {"plan", "summary"} <= set(info["kinds"])
    assert info["kinds"]["plan"] == {"entries": 1, "bytes": os.path.getsize(cache.path("plan", PROGRAM))}
    assert sum(k["entries"] for k in info["kinds"].values()) == info["entries"]
    monkeypatch.setenv(cache.LIMIT_VARIABLE, "1M")
    monkeypatch.setenv("CRASP_NO_CACHE", "1")
    info = json.loads(crasp("cache", "info", "--json")[1])
    assert (info["limit"], info["limit_from"], info["enabled"]) == (2**20, "CRASP_CACHE_SIZE", False)


def test_cache_info_and_clear_as_text(folder, tmp_path, monkeypatch):
    program = tmp_path / "p.cr"
    program.write_text(PROGRAM)
    crasp("check", str(program))
    status, out, _ = crasp("cache", "info")
    lines = out.splitlines()
    assert status == 0 and lines[0] == f"folder:  {folder}"
    assert lines[1].startswith("entries: ") and "summary 1" in lines[1]
    assert lines[2] == "limit:   256 MiB (the default; CRASP_CACHE_SIZE sets it)"
    (folder / "notes.txt").write_text("mine")
    count = len(cache.entries())
    size = sum(entry[2] for entry in cache.entries())
    status, out, err = crasp("cache", "clear")
    assert (status, err) == (0, "")
    assert out == f"removed {count} entr{'y' if count == 1 else 'ies'} ({cache.format_size(size)}) from {folder}\n"
    assert cache.entries() == [] and (folder / "notes.txt").read_text() == "mine"
    assert crasp("cache", "info")[1].splitlines()[1] == "entries: 0, 0 B"
    assert crasp("check", str(program))[0] == 0 and len(cache.entries()) >= 1  # kept again
    monkeypatch.setenv(cache.LIMIT_VARIABLE, "2G")
    assert crasp("cache", "info")[1].splitlines()[2] == "limit:   2 GiB (from CRASP_CACHE_SIZE)"
    monkeypatch.setenv(cache.LIMIT_VARIABLE, "huge")
    status, out, err = crasp("cache", "info")
    assert status == 1 and err.startswith("crasp: error: CRASP_CACHE_SIZE: 'huge' is not a size")


def test_cache_usage_errors(folder):
    status, _, err = crasp("cache")
    assert status == 2 and "usage: crasp cache" in err
    status, _, err = crasp("cache", "info", "--bogus")
    assert status == 2 and "usage: crasp cache info" in err and "unrecognized arguments: --bogus" in err
