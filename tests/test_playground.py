"""The playground's API (``crasp serve``) through Starlette's TestClient: every answer against the
toolkit called directly, the limits (body size, time), the refusal of Python, and the command
line without the 'serve' extra."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the playground needs the 'serve' extra: pip install 'crasp-lengthgen[serve]'")
pytest.importorskip("httpx", reason="starlette's TestClient needs httpx: pip install httpx")

from starlette.testclient import TestClient  # noqa: E402

import crasp  # noqa: E402
from crasp.checker import check  # noqa: E402
from crasp.cli import describe  # noqa: E402
from crasp.parser import parse  # noqa: E402
from crasp.trace import trace  # noqa: E402
from tasks.playground import jobs, worker  # noqa: E402
from tasks.playground.app import Limits, create_app  # noqa: E402

SLOW_LIMIT = 1.0


def deep_program(depth: int) -> str:
    """A program of ``depth`` nested counts, alternating uniform and local ones: quick to check
    and run, slow to compile (seconds per ten levels)."""
    lines = ['B0 = "a"']
    for i in range(1, depth + 1):
        lines.append(f'B{i} = #B{i - 1} > #"b"' if i % 2 else f'B{i} = #[i - j == 1] B{i - 1} >= 1')
    return "\n".join(lines)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Limits(seconds=30.0))) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def strict():
    """A server with a one-second time limit."""
    with TestClient(create_app(Limits(seconds=SLOW_LIMIT, jobs=2))) as test_client:
        yield test_client


def library_text(name: str) -> str:
    return Path(crasp.library.file(name)).read_text(encoding="utf-8")


# ---------------------------------------------------------------- check


def test_check_summarises_every_library_program_as_crasp_check_does(client):
    for name in crasp.library.names():
        text = library_text(name)
        answer = client.post("/api/check", json={"program": text})
        assert answer.status_code == 200
        body = answer.json()
        assert body["ok"] is True and body["diagnostics"] == []
        assert body["summary"] == describe(check(parse(text, "program"))), name


def test_a_planted_error_is_diagnosed_at_its_line_and_column(client):
    text = library_text("dyck1").replace("C_open < C_close", "C_open < C_closed")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "C_closed" in row)
    column = text.splitlines()[line - 1].index("C_closed") + 1
    body = client.post("/api/check", json={"program": text}).json()
    assert body["ok"] is False
    [found] = body["diagnostics"]
    assert (found["line"], found["column"], found["end_column"]) == (line, column, column + len("C_closed"))
    assert "C_closed" in found["message"] and f"program:{line}:{column}:" in found["text"]


def test_a_syntax_error_is_diagnosed_where_the_parser_stops(client):
    text = 'C = #"a"\nA = C >= \n'
    with pytest.raises(crasp.CraspSyntaxError) as expected:
        parse(text, "program")
    [found] = client.post("/api/check", json={"program": text}).json()["diagnostics"]
    assert found["kind"] == "syntax error"
    assert (found["line"], found["column"]) == (expected.value.line, expected.value.column)
    assert found["expected"] == list(expected.value.expected)


# ---------------------------------------------------------------- run


@pytest.mark.parametrize("name,tokens,offset", [("dyck1", "( ( ) ) ( )", 0), ("anbncn", "a a b b c c", 3),
                                                ("aa_star", "a a a a", 1), ("contains_ab", "b b a b", 0)])
def test_run_gives_the_interpreters_outputs_and_trace(client, name, tokens, offset):
    text = library_text(name)
    body = client.post("/api/run", json={"program": text, "tokens": tokens, "offset": offset}).json()
    checked = check(parse(text))
    result = crasp.run(checked, [tokens], offset=offset)
    expected = trace(checked, tokens, offset=offset)
    assert body["tokens"] == list(result.tokens[0]) == list(expected.tokens)
    assert body["verdict"] == ("accept" if result.accept[0] else "reject")
    assert body["positions"] == [offset + k + 1 for k in range(len(expected.tokens))]
    assert [(row["name"], row["values"]) for row in body["rows"]] == [(r.name, list(r.values)) for r in expected.rows]
    assert body["outputs"] == ["accept" if v else "reject" for v in expected.rows[-1].values]


def test_run_of_a_next_token_program_gives_the_token_at_each_position(client):
    text = 'A = #"a"\nB = #"b"\nnext "a" = A > B\nnext "b" = B > A'
    body = client.post("/api/run", json={"program": text, "tokens": "a b b a a"}).json()
    assert body["kind"] == "next" and body["verdict"] is None
    assert body["outputs"] == [t or "?" for t in crasp.run(parse(text), ["a b b a a"]).next_tokens(0)]
    assert body["outputs"] == ["a", "?", "b", "?", "a"]


def test_a_long_input_shows_both_ends_of_its_trace(client):
    tokens = " ".join("ab"[k % 3 == 0] for k in range(1000))
    body = client.post("/api/run", json={"program": 'C = #"a"\nA = C > #"b"', "tokens": tokens}).json()
    half = jobs.MAX_TRACE_POSITIONS // 2
    assert body["length"] == 1000 and len(body["positions"]) == 2 * half + 1
    assert body["positions"][half] is None and body["positions"][-1] == 1000
    reference = crasp.run(parse('C = #"a"\nA = C > #"b"'), [tokens]).accept[0]
    assert body["verdict"] == ("accept" if reference else "reject")


def test_run_errors_are_json_naming_line_column_or_position(client):
    answer = client.post("/api/run", json={"program": 'C = #"a"\nA = D > 0', "tokens": "a"})
    assert answer.status_code == 400
    assert (answer.json()["line"], answer.json()["column"]) == (2, 5)
    assert answer.json()["error"].startswith("program:2:5: undefined name 'D'")
    unknown = client.post("/api/run", json={"program": 'A = #"a" > 0', "tokens": "a z"})
    assert unknown.status_code == 400 and "token 2: token 'z'" in unknown.json()["error"]
    allowed = client.post("/api/run", json={"program": 'A = #"a" > 0', "tokens": "a z", "allow_unknown": True})
    assert allowed.status_code == 200 and allowed.json()["verdict"] == "accept"
    for bad in ({"tokens": "a"}, {"program": 'A = #"a" > 0', "offset": -1}, {"program": ["A"]}):
        answer = client.post("/api/run", json=bad)
        assert answer.status_code == 400 and isinstance(answer.json()["error"], str)
    for unreadable in (b"{not json", b"[" * 20_000 + b"]" * 20_000, b'{"offset": ' + b"1" * 5000 + b"}"):
        answer = client.post("/api/run", content=unreadable)  # bad syntax, too deep for the parser, too long a number
        assert answer.status_code == 400 and answer.json()["error"].startswith("the request is not JSON")


# ---------------------------------------------------------------- predict


def test_predict_a_regular_expression_as_the_engine_does(client):
    from tasks import registry
    from tasks.findings import QUICK
    from tasks.predict import predict

    body = client.post("/api/predict", json={"regex": "(ab)*", "alphabet": "ab"}).json()
    direct = predict(registry.get("re:ab:(ab)*"), budget=dataclasses.replace(QUICK, seconds=jobs.PREDICT_SECONDS))
    assert body["task"] == "re:ab:(ab)*"
    assert [(s["scheme"], s["verdict"], s["strength"]) for s in body["schemes"]] == \
        [(k, v.verdict.value, v.strength.value if v.strength else None) for k, v in direct.schemes.items()]
    assert all(s["reason"] for s in body["schemes"])


def test_predict_a_suite_task_beside_its_published_labels(client):
    from tasks import registry

    body = client.post("/api/predict", json={"task": "parity"}).json()
    labels = registry.get("parity").labels
    assert body["labels"] == {"ape": labels.ape, "nope": labels.nope} == {"ape": False, "nope": False}
    assert {s["scheme"]: s["verdict"] for s in body["schemes"]} == {"ape": "does not generalize",
                                                                     "nope": "does not generalize"}


def test_predict_refuses_module_attribute_names_and_reports_bad_regexes(client):
    for name in ("os:system", "tests.user_tasks:anything"):
        answer = client.post("/api/predict", json={"task": name})
        assert answer.status_code == 400
        assert "module:attribute" in answer.json()["error"] and "would run Python" in answer.json()["error"]
    bad = client.post("/api/predict", json={"regex": "(ab", "alphabet": "ab"})
    assert bad.status_code == 400 and "(ab" in bad.json()["error"]
    unknown = client.post("/api/predict", json={"task": "no_such_task"})
    assert unknown.status_code == 400 and "no task named" in unknown.json()["error"]


# ---------------------------------------------------------------- compile


def test_compile_shows_every_heads_attention_on_the_input(client):
    from limit_transformer.compiler import compile_program
    from limit_transformer.plot import attention_patterns
    from tasks.playground.heatmaps import drawable

    text = library_text("dyck1")
    body = client.post("/api/compile", json={"program": text, "tokens": "( ( ) )"}).json()
    patterns = attention_patterns(compile_program(parse(text)), "( ( ) )")
    assert [(m["layer"], m["head"]) for m in body["heatmaps"]] == sorted(patterns)
    for found in body["heatmaps"]:
        assert found["labels"] == ["BOS", "(", "(", ")", ")"]
        np.testing.assert_allclose(found["weights"], patterns[(found["layer"], found["head"])], atol=1e-4)
        assert (found["image"] or "").startswith("data:image/png;base64,") == drawable()
    assert body["verdicts"]["compiled"] == body["verdicts"]["interpreter"] == ["accept"]
    assert body["properties"]["heads"] == len(patterns)


def test_heatmaps_without_matplotlib_carry_the_weights_for_a_table():
    from tasks.playground.heatmaps import heatmaps

    weights = np.array([[1.0, 0.0], [0.25, 0.75]])
    [found] = heatmaps({(1, 0): weights}, ["BOS", "a"], {(1, 0): "offset 1"}, draw=False)
    assert found["image"] is None and found["weights"] == weights.tolist()
    assert found["title"] == "layer 1 head 0: offset 1"


def test_compile_refuses_inputs_too_long_to_draw(client):
    tokens = " ".join(["("] * (jobs.MAX_HEATMAP_TOKENS + 1))
    answer = client.post("/api/compile", json={"program": library_text("dyck1"), "tokens": tokens})
    assert answer.status_code == 400 and f"at most {jobs.MAX_HEATMAP_TOKENS}" in answer.json()["error"]


# ---------------------------------------------------------------- limits


def test_an_oversized_body_gets_413_json(client):
    program = "A = #\"a\" > 0\n" + "// padding\n" * 7000
    assert len(program) > Limits().body_bytes
    announced = client.post("/api/check", json={"program": program})
    assert announced.status_code == 413 and "65,536 bytes" in announced.json()["error"]

    def chunks():  # no Content-Length: the body is counted as it arrives
        yield b'{"program": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    streamed = client.post("/api/check", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413 and streamed.json()["error"].startswith("the request is larger")


def _children(pid: int) -> list[int]:
    """The live (not zombie) children of process ``pid`` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def test_a_slow_request_is_stopped_within_the_limit_and_the_server_stays_responsive(strict):
    started = time.monotonic()
    answer = strict.post("/api/compile", json={"program": deep_program(60), "tokens": "a b a"})
    elapsed = time.monotonic() - started
    assert answer.status_code == 504, answer.json()
    assert "time limit of 1 s" in answer.json()["error"]
    assert elapsed < SLOW_LIMIT + 1.0
    started = time.monotonic()
    assert strict.post("/api/check", json={"program": deep_program(60)}).json()["ok"] is True
    assert time.monotonic() - started < SLOW_LIMIT
    if sys.platform.startswith("linux"):  # the killed worker is gone, not left computing
        from multiprocessing import forkserver

        parent = getattr(forkserver._forkserver, "_forkserver_pid", None)
        if parent is None:  # pragma: no cover - a Python whose forkserver keeps its process elsewhere
            return
        deadline = time.monotonic() + 1.0
        while _children(parent) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _children(parent) == []


def test_a_job_past_its_memory_cap_fails_with_an_error_not_a_crash():
    program = "\n".join(['C0 = #"a"', *(f'C{i} = C{i - 1} + #"b"' for i in range(1, 300)), "A = C299 > 0"])
    tokens = " ".join("ab"[k % 2] for k in range(20000))
    with pytest.raises(worker.JobError, match="out of memory"):
        worker.call("run", {"program": program, "tokens": tokens}, seconds=30, memory=64 << 20)


def test_limits_are_checked_and_served():
    with pytest.raises(ValueError, match="time limit"):
        Limits(seconds=0)
    with TestClient(create_app(Limits(seconds=2.5, body_bytes=2048), warm=False)) as small:
        assert small.get("/api/limits").json()["seconds"] == 2.5
        assert small.post("/api/check", json={"program": "x" * 3000}).status_code == 413
        assert small.post("/api/nosuch", json={}).status_code == 404
        assert small.get("/api/check").status_code == 405 and "error" in small.get("/api/check").json()


def test_the_page_and_its_assets_are_local(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for asset in ("/static/playground.js", "/static/playground.css"):
        assert client.get(asset).status_code == 200
        assert asset in page.text
    for text in (page.text, client.get("/static/playground.js").text, client.get("/static/playground.css").text):
        assert "http://" not in text and "https://" not in text and "//cdn" not in text
    examples = client.get("/api/examples").json()
    assert examples["dyck1"] == library_text("dyck1") and set(examples) == set(crasp.library.names())


def test_a_job_that_dies_is_reported_not_hung():
    with pytest.raises(worker.JobFailed, match="no job 'nosuch'"):
        worker.call("nosuch", {}, seconds=1)


# ---------------------------------------------------------------- the command line


@pytest.fixture
def serve_only(monkeypatch):
    """``crasp`` with the serve command as its only extension (other packages' commands aside)."""
    from importlib.metadata import EntryPoint

    import crasp.cli

    entry = EntryPoint(name="5-serve", value="tasks.playground.cli:add_commands", group=crasp.cli.COMMANDS_GROUP)
    monkeypatch.setattr(crasp.cli, "_extensions", lambda: [entry])
    return crasp.cli.main


def test_the_serve_entry_point_is_declared():
    from importlib.metadata import entry_points

    found = {e.name: e.value for e in entry_points(group="crasp.commands")}
    assert found.get("5-serve") == "tasks.playground.cli:add_commands"


def test_serve_without_the_extra_names_the_install_command(serve_only, monkeypatch, capsys):
    for module in ("uvicorn", "starlette", "tasks.playground.app"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it raises ImportError
    assert serve_only(["serve", "--help"]) == 0
    assert "--time-limit" in capsys.readouterr().out
    assert serve_only(["serve", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("crasp: error: crasp serve needs the 'serve' extra")
    assert "pip install 'crasp-lengthgen[serve]'" in err


def test_serve_prints_its_address_and_answers(tmp_path):
    code = ("import sys, crasp.cli as c; from importlib.metadata import EntryPoint as E; "
            "c._extensions = lambda: [E('5-serve', 'tasks.playground.cli:add_commands', c.COMMANDS_GROUP)]; "
            "sys.exit(c.main(sys.argv[1:]))")
    process = subprocess.Popen([sys.executable, "-c", code, "serve", "--port", "0", "--time-limit", "5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("crasp playground: http://127.0.0.1:"), process.stderr.read()
        address = line.split()[2]
        import httpx

        answer = httpx.post(address + "api/check", json={"program": "A = B"}, timeout=30)
        assert answer.json()["diagnostics"][0]["column"] == 5
    finally:
        process.terminate()
        process.wait(10)
