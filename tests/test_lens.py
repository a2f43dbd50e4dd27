"""The TransformerLens export (limit_transformer.lens): same decisions as the compiled model.

Tests that build a HookedTransformer need the optional extra (``pip install '.[interp]'``) and
are skipped without it; the export itself (config and weights) imports nothing from
TransformerLens and is tested everywhere.
"""

import builtins
import io
import itertools
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp import check, library
from crasp.cli import main
from crasp.strategies import programs
from limit_transformer import CompileConfig, LimitTransformer, ModelSpec, compile, run, to_ape
from limit_transformer.lens import (
    LensError, LensExport, export_lens, load_transformer_lens, run_lens,
    to_transformer_lens, transformer_lens_weights,
)
from limit_transformer.runner import prepare

N_CTX = 201  # inputs up to 200 tokens, the beginning-of-sequence token at position 0
ROOT = Path(__file__).resolve().parent.parent


def transformer_lens():
    """The transformer_lens module with HookedTransformer, or a skip that says why it is missing
    (imported by name: it is the optional 'interp' extra, not a dev dependency)."""
    module = pytest.importorskip("transformer_lens", reason="TransformerLens is the optional 'interp' extra "
                                 "(pip install '.[interp]'); without it the HookedTransformer tests are skipped")
    try:
        module.HookedTransformer
    except (ImportError, AttributeError):
        pytest.skip(f"TransformerLens {getattr(module, '__version__', '?')} has no HookedTransformer "
                    "(4.0 removed it); the 'interp' extra pins transformer_lens<4")
    return module


def hooked_transformer_class():
    return transformer_lens().HookedTransformer


_CACHE: dict = {}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The forward passes here are many and small: one thread each runs them far faster than
    two threads that wait on each other (and on a second pytest worker)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def compiled(name: str) -> LimitTransformer:
    if ("compiled", name) not in _CACHE:
        _CACHE[("compiled", name)] = compile(check(library.load(name)), CompileConfig(max_length=N_CTX - 1))
    return _CACHE[("compiled", name)]


def exported(name: str, n_ctx: int = N_CTX):
    """(export, HookedTransformer) of a library program for ``n_ctx`` positions."""
    hooked_transformer_class()
    if ("lens", name, n_ctx) not in _CACHE:
        export = export_lens(compiled(name), n_ctx=n_ctx)
        _CACHE[("lens", name, n_ctx)] = export, export.hooked_transformer()
    return _CACHE[("lens", name, n_ctx)]


def assert_same_decisions_and_bounded_logits(name: str, inputs: list[list[str]], n_ctx: int = N_CTX) -> None:
    """At every position of every input, every output of the exported model (logit > 0) equals
    the compiled model's (read-out > 1/2), and every logit is within the export's bound of the
    compiled read-out minus 1/2. Inputs of one length run as one batch in both models."""
    model = compiled(name)
    export, hooked = exported(name, n_ctx)
    W_U = model.W_U.to_dense() if model.W_U.is_sparse else model.W_U
    lengths = sorted({len(seq) for seq in inputs})
    batches = [chunk for n in lengths for chunk in _chunks([seq for seq in inputs if len(seq) == n], 4096)]
    for batch in batches:
        length = len(batch[0])
        tokens, positions, _ = prepare(model, batch, np.zeros(len(batch), dtype=np.int64), allow_unknown=True)
        ids, _ = export.tokens(batch, allow_unknown=True)
        with torch.no_grad():
            residual = model(tokens, positions)
            want = model.outputs(residual)[:, 1:]
            readout = residual @ W_U
            logits = hooked(ids, return_type="logits")
        assert torch.equal(want, logits[:, 1:] > 0), f"{name}: outputs differ on inputs of length {length}"
        assert set(torch.unique(readout).tolist()) <= {0.0, 1.0}
        deviation = float((logits - (readout - 0.5)).abs().max())
        assert deviation <= export.logit_error, (name, deviation, export.logit_error)
    assert 0 < export.logit_error < 1e-9 and export.heaviside_error < 1e-6  # far from 1/2 in float64


def _chunks(items: list, size: int) -> list[list]:
    return [items[k:k + size] for k in range(0, len(items), size)]


# ---------------------------------------------------------------------- agreement


@pytest.mark.parametrize("name", library.names())
def test_agrees_with_the_compiled_model_on_every_input_up_to_length_10(name):
    """Exhaustive over the alphabet, on the export for 11 positions (the one-hot position code of
    an export for 201 positions makes each forward pass about 20 times more work)."""
    alphabet = sorted(check(library.load(name)).info.alphabet)
    inputs = [list(word) for n in range(1, 11) for word in itertools.product(alphabet, repeat=n)]
    assert_same_decisions_and_bounded_logits(name, inputs, n_ctx=11)


@pytest.mark.parametrize("name", library.names())
def test_agrees_with_the_compiled_model_on_random_inputs_up_to_length_200(name):
    rng = np.random.default_rng(41)
    alphabet = sorted(check(library.load(name)).info.alphabet)
    symbols = alphabet + ["x"]  # a token outside the alphabet reads as <|other|>
    inputs = []
    for k in range(160):
        n = N_CTX - 1 if k < 8 else int(rng.integers(1, N_CTX))
        if k % 4 == 1:  # near the language: blocks of one symbol (a^n b^n c^n, (aa)*, ...)
            parts = rng.multinomial(n, np.ones(len(alphabet)) / len(alphabet))
            inputs.append([s for s, c in zip(alphabet, parts) for _ in range(c)])
        else:
            inputs.append(list(rng.choice(symbols if k % 4 == 0 else alphabet, size=n)))
    assert_same_decisions_and_bounded_logits(name, inputs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**32 - 1))
def test_random_programs_export_with_the_same_decisions(program, seed):
    """Periodic predicates, local guards, next-token outputs: any compilable program."""
    hooked_transformer_class()
    checked = check(program)
    model = compile(checked, CompileConfig(max_length=32))
    export = export_lens(model, n_ctx=33)
    hooked = export.hooked_transformer()
    rng = np.random.default_rng(seed)
    symbols = sorted(checked.info.alphabet) + ["zz"]
    W_U = model.W_U.to_dense() if model.W_U.is_sparse else model.W_U
    for n in (1, 2, 7, 32):
        batch = [list(rng.choice(symbols, size=n)) for _ in range(6)]
        tokens, positions, _ = prepare(model, batch, np.zeros(len(batch), dtype=np.int64), allow_unknown=True)
        ids, _ = export.tokens(batch, allow_unknown=True)
        with torch.no_grad():
            residual = model(tokens, positions)
            logits = hooked(ids)
        assert torch.equal(model.outputs(residual), logits > 0)
        assert float((logits - (residual @ W_U - 0.5)).abs().max()) <= export.logit_error


def test_run_lens_reads_verdicts_like_the_runner():
    model = compiled("dyck1")
    _, hooked = exported("dyck1", 11)
    words = ["( ( ) )", "( ) ) (", "(", "( ) ( )", "( x )"]
    want, got = run(model, words, allow_unknown=True), run_lens(hooked, words, allow_unknown=True)
    assert got.accept.tolist() == want.accept.tolist() == [True, False, False, True, True]
    assert np.array_equal(got.accept_values, want.accept_values) and np.array_equal(got.lengths, want.lengths)


# ---------------------------------------------------------------------- TransformerLens features


def test_cache_hooks_and_patterns_show_the_compiled_computation():
    from limit_transformer.plot import attention_patterns

    export, hooked = exported("contains_ab")
    model = compiled("contains_ab")
    word = "b a b b a".split()
    ids, _ = export.tokens([word])
    logits, cache = hooked.run_with_cache(ids)
    # every compiled head's pattern, and the residual stream in the compiled slots
    for (layer, head), pattern in attention_patterns(model, word).items():
        assert np.allclose(cache["pattern", layer][0, head].numpy(), pattern, rtol=0, atol=1e-12)
    tokens, positions, _ = prepare(model, [word], np.zeros(1, dtype=np.int64))
    states = model.residual_stream(tokens, positions)
    d = model.spec.d_model
    for layer in range(model.spec.n_layers):
        for state, name in ((states[2 * layer + 1], "resid_mid"), (states[2 * layer + 2], "resid_post")):
            assert torch.allclose(cache[name, layer][0, :, :d], state[0], rtol=0, atol=1e-12), (name, layer)
    assert cache["pattern", 0][0, 1, 3, 2] > 1 - 1e-15  # the offset head reads the previous position
    assert (logits[0, 1:, 0] > 0).tolist() == [False, False, True, True, True]

    def ablate(z, hook):  # knock out the offset-1 head: "ab" is no longer seen
        z[:, :, 1] = 0.0
        return z

    ablated = hooked.run_with_hooks(ids, fwd_hooks=[("blocks.0.attn.hook_z", ablate)])
    assert not (ablated[0, 1:, 0] > 0).any()


def test_to_transformer_lens_and_the_weights_load_into_a_plain_hooked_transformer():
    lens = transformer_lens()
    HookedTransformer, HookedTransformerConfig = lens.HookedTransformer, lens.HookedTransformerConfig

    model = compiled("dyck1")
    config, state = transformer_lens_weights(model, n_ctx=32)
    plain = HookedTransformer(HookedTransformerConfig(**config))
    missing, unexpected = plain.load_state_dict(state, strict=False)
    assert not unexpected and all(k.endswith((".mask", ".IGNORE")) for k in missing)
    hooked = to_transformer_lens(model, n_ctx=32)
    words = ["( ( ) )", "( ) ) (", ") (", "( ( )"]
    ids, _ = hooked.crasp.tokens(words)
    with torch.no_grad():
        assert torch.equal(plain(ids), hooked(ids))
    assert run_lens(hooked, words).accept.tolist() == run(model, words).accept.tolist() == [True, False, False, False]


# ---------------------------------------------------------------------- no TransformerLens needed


def test_the_export_does_not_import_transformer_lens():
    script = (
        "import sys\n"
        "sys.modules['transformer_lens'] = None  # any import of it fails\n"
        "from crasp import library\n"
        "from limit_transformer import compile\n"
        "from limit_transformer.lens import export_lens, LensError, require_transformer_lens\n"
        "export = export_lens(compile(library.load('contains_ab')), n_ctx=16)\n"
        "assert export.state_dict['pos_embed.W_pos'].shape == (16, 25)\n"
        "assert export.config['normalization_type'] is None and export.config['act_fn'] == 'relu'\n"
        "try:\n"
        "    require_transformer_lens()\n"
        "except LensError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "TransformerLens with HookedTransformer is needed" in done.stdout and "[interp]" in done.stdout


def test_the_mapping_keeps_the_compiled_slots_and_adds_a_position_code():
    model = compiled("contains_ab")
    export = export_lens(model, n_ctx=8)
    d = model.spec.d_model
    state = export.state_dict
    assert export.labels[:d] == model.spec.labels and export.labels[d:] == tuple(f"position {p}" for p in range(8))
    assert torch.equal(state["pos_embed.W_pos"][:, d:], torch.eye(8, dtype=torch.float64))
    W_pos = state["pos_embed.W_pos"]
    scores = (W_pos @ state["blocks.0.attn.W_Q"][1]) @ (W_pos @ state["blocks.0.attn.W_K"][1]).T
    phi = float(model.blocks[0].attn.phi[1, 1])
    assert torch.equal(torch.tril(scores), torch.diag(torch.full((7,), phi, dtype=torch.float64), -1))
    assert not state["blocks.0.attn.W_Q"][0].any()  # the uniform head scores every key 0
    assert export.config["use_attn_scale"] is False and export.config["n_ctx"] == 8
    assert state["unembed.b_U"].tolist() == [-0.5]
    # a Heaviside unit is two ReLU units with biases 1 apart and opposite output rows
    W_in, b_in, W_out = state["blocks.0.mlp.W_in"], state["blocks.0.mlp.b_in"], state["blocks.0.mlp.W_out"]
    assert torch.equal(W_in[:, 0], W_in[:, 1]) and float(b_in[0] - b_in[1]) == 1.0
    assert torch.equal(W_out[0], -W_out[1])
    assert "+ReLU(z/w - 1/2)" in export.units[0][0] and "offset 1" in export.heads[0][1]


def test_saved_exports_round_trip(tmp_path):
    export = export_lens(compiled("dyck1"), n_ctx=20)
    again = LensExport.load(export.save(tmp_path / "dyck1.pt"))
    assert again.config == export.config and again.vocabulary == export.vocabulary
    assert all(torch.equal(again.state_dict[k], v) for k, v in export.state_dict.items())
    saved = torch.load(tmp_path / "dyck1.pt", weights_only=True)
    assert saved["config"]["dtype"] == "float64" and saved["crasp"]["outputs"] == ["accept"]
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(LensError, match="not a readable torch file"):
        LensExport.load(tmp_path / "junk.pt")
    with pytest.raises(LensError, match="no such file"):
        LensExport.load(tmp_path / "missing.pt")


# ---------------------------------------------------------------------- refusals


def test_content_dependent_attention_is_refused():
    ape = to_ape(compiled("contains_ab"), 16)  # scores by a one-hot code in W_Q and W_K
    with pytest.raises(LensError, match="scores keys by their content"):
        export_lens(ape, n_ctx=16)


def test_a_heaviside_unit_without_a_margin_is_refused():
    model = compiled("dyck1")
    spec = ModelSpec(**{**asdict(model.spec), "margins": ()})
    spec = ModelSpec.from_json(spec.to_json())
    stripped = LimitTransformer(spec)
    stripped.load_state_dict(model.state_dict())
    with pytest.raises(LensError, match=r"layer 0 MLP unit 0 \(writes V\) is a Heaviside unit with no recorded margin"):
        export_lens(stripped, n_ctx=8)


def test_contexts_beyond_the_guarantee_or_the_precision_are_refused():
    with pytest.raises(LensError, match="exact only up to 200; compile with max_length >= 300"):
        export_lens(compiled("dyck1"), n_ctx=301)
    with pytest.raises(LensError, match="at least 2 positions"):
        export_lens(compiled("dyck1"), n_ctx=1)
    float32 = compile(check(library.load("dyck1")), CompileConfig(max_length=300, dtype="float32"))
    with pytest.raises(LensError, match=r"Heaviside step that writes .*: in float32 at 301 positions, rounding"):
        export_lens(float32, n_ctx=301)
    assert export_lens(float32, n_ctx=12).logit_error < 0.5  # short contexts are fine in float32
    with pytest.raises(LensError, match="more than max_parameters"):
        export_lens(compiled("contains_ab"), n_ctx=N_CTX, max_parameters=10_000)


def test_inputs_longer_than_the_context_are_refused():
    from crasp.errors import InputError

    export = export_lens(compiled("dyck1"), n_ctx=4)
    with pytest.raises(InputError, match="an input has 4 tokens but the exported model has 4 positions"):
        export.tokens([["("] * 4])


# ---------------------------------------------------------------------- command line


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_crasp_compile_exports_a_loadable_hooked_transformer(tmp_path):
    path = tmp_path / "contains_ab.pt"
    status, out, err = _cli("compile", "contains_ab", "--verify-length", "24", "--count", "5",
                            "--export", "tl", "-o", str(path))
    assert status == 0, err
    assert f"wrote {path} (TransformerLens HookedTransformer, n_ctx 25" in err
    export = LensExport.load(path)
    assert export.n_ctx == 25 and export.vocabulary == ("<|bos|>", "a", "b", "<|other|>")
    hooked_transformer_class()
    hooked = load_transformer_lens(path)
    words = ["a b", "b a", "b b a b", "a a a"]
    assert run_lens(hooked, words).accept.tolist() == [True, False, True, False]


def test_crasp_compile_export_usage_errors(tmp_path):
    assert _cli("compile", "dyck1", "--export", "tl")[0] == 2  # no -o FILE to write to
    assert _cli("compile", "dyck1", "--export", "onnx", "-o", str(tmp_path / "x.pt"))[0] == 2
    status, _, err = _cli("compile", "dyck1", "--dtype", "float32", "--verify-length", "300", "--count", "2",
                          "--export", "tl", "--out", str(tmp_path / "x.pt"))  # --out: -o's older name
    assert status == 1 and "rounding may move its input" in err and not (tmp_path / "x.pt").exists()
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- the documented example


def test_the_interpretability_page_runs(tmp_path, monkeypatch):
    hooked_transformer_class()
    pytest.importorskip("matplotlib", reason="the page draws with matplotlib (the 'plot' extra)")
    text = (ROOT / "docs" / "interpretability.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(builtins.compile(block, "docs/interpretability.md", "exec"), namespace)  # noqa: S102
    assert (tmp_path / "contains_ab_heads.png").exists()
