"""``crasp compile`` and ``crasp run --compiled``."""

import io

import pytest

from crasp.cli import main


def _run(*argv, stdin=None, monkeypatch=None):
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_compile_verifies_and_saves(tmp_path):
    status, out, err = _run("compile", "contains_ab", "--verify-length", "64", "--count", "20",
                            "-o", str(tmp_path / "model"))
    assert status == 0, err
    assert "offset 1 (phi support [1])" in out and "LOCAL: tau 1" in out
    assert "compiled model equals the interpreter" in out
    assert (tmp_path / "model.safetensors").exists() and (tmp_path / "model.json").exists()


def test_compile_json_is_one_document(tmp_path):
    import json

    status, out, err = _run("compile", "contains_ab", "--verify-length", "32", "--count", "5", "--json",
                            "-o", str(tmp_path / "model"))
    document, end = json.JSONDecoder().raw_decode(out)
    assert status == 0 and out[end:].strip() == "", err
    assert set(document) == {"ok", "program", "model", "properties", "verification", "files"}
    assert document["ok"] is True and document["program"] == "contains_ab"
    model = document["model"]
    assert {"source", "layers", "width", "parameters", "nonzero_parameters", "dtype", "period", "periodic", "blocks",
            "residual", "outputs"} == set(model)
    assert model["layers"] == len(model["blocks"]) and model["width"] == len(model["residual"])
    heads = [head for block in model["blocks"] for head in block["heads"]]
    assert {"kind": "offset", "offset": 1, "reads": ['"a"'], "phi_support": [1]} in heads
    assert document["properties"] == {"period": 1, "tau": 1, "layers": model["layers"], "heads": len(heads)}
    assert document["verification"] == {"ok": True, "inputs": 5, "positions": document["verification"]["positions"],
                                        "longest": 32, "mismatches": []}
    assert document["files"] == [str(tmp_path / "model.safetensors"), str(tmp_path / "model.json")]
    assert "wrote" in err and all((tmp_path / name).is_file() for name in ("model.safetensors", "model.json"))


def test_out_is_a_hidden_older_name_of_output(tmp_path):
    import re

    status, out, _ = _run("compile", "--help")
    assert status == 0 and "-o FILE, --output FILE" in out and re.search(r"--out\b(?!put)", out) is None
    status, _, err = _run("compile", "dyck1", "--verify-length", "8", "--count", "2", "--out", str(tmp_path / "m"))
    assert status == 0, err
    assert (tmp_path / "m.safetensors").exists() and (tmp_path / "m.json").exists()
    status, _, err = _run("compile", "dyck1", "--export", "tl")
    assert status == 2 and "--export tl needs -o FILE" in err


def test_compile_in_float32():
    status, out, _ = _run("compile", "dyck1", "--dtype", "float32", "--verify-length", "300", "--count", "5")
    assert status == 0 and "float32" in out


def test_compile_refuses_what_it_cannot_do():
    status, _, err = _run("compile", "dyck1", "--device", "cuda")
    import torch

    if not torch.cuda.is_available():
        assert status == 1 and "no CUDA device" in err
    status, _, err = _run("compile", "dyck1", "--verify-length", "0")
    assert status == 2 and "--verify-length: 0 is less than 1" in err
    status, _, err = _run("compile", "dyck1", "--verify-length", str(2**60))
    assert status == 1 and "max_length must be" in err
    assert _run("compile", "dyck1", "--dtype", "float16")[0] == 2


@pytest.mark.parametrize("program,lines", [
    ("dyck1", "( ( ) )\n) (\n( ( (\n"),
    ("aa_star", "a a\na a a\n<bos> a\n"),
])
def test_run_compiled_prints_what_the_interpreter_prints(monkeypatch, program, lines):
    interpreted = _run("run", program, "--allow-unknown", stdin=lines, monkeypatch=monkeypatch)
    compiled = _run("run", "--compiled", program, "--allow-unknown", stdin=lines, monkeypatch=monkeypatch)
    assert interpreted[0] == compiled[0] == 0
    assert interpreted[1] == compiled[1]


def test_run_compiled_with_an_offset_matches(tmp_path):
    source = tmp_path / "p.cr"
    source.write_text('alphabet {"a"}\nA = i mod 3 in {0} && #[i - j in {1}] "a" >= 1\n')
    for offset in ("0", "1", "2"):
        assert _run("run", str(source), "a a a", "--offset", offset)[1] == \
            _run("run", "--compiled", str(source), "a a a", "--offset", offset)[1]
