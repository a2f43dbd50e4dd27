"""PERIODIC/LOCAL checks on weights, translation to APE transformers, export and import."""

import json

import numpy as np
import pytest

from crasp import check, library, parse
from limit_transformer import compile, run
from limit_transformer.ape import TranslationError, positional_regularizer, to_ape
from limit_transformer.export import ExportError, load, save
from limit_transformer.properties import PropertyViolation, check_properties
from limit_transformer.agreement import per_position, random_inputs
from tasks import registry

LOCAL_PERIODIC = 'alphabet {"a", "b"}\nA = #[i - j in {1, 3}] "a" >= 1 && i mod 4 in {1, 2} || #"b" > #"a"'


def test_properties_are_read_off_the_weights():
    props = check_properties(compile(parse(LOCAL_PERIODIC)))
    assert (props.period, props.tau) == (4, 3)
    assert check_properties(compile(library.load("dyck1"))).tau == -1


def test_period_is_the_least_one_of_the_table():
    model = compile(parse('A = i mod 6 in {0, 3} && #"a" > 0'))  # really period 3
    assert model.spec.period == 6 and check_properties(model).period == 3


def test_a_bias_with_infinite_support_is_not_local():
    model = compile(parse(LOCAL_PERIODIC))
    model.blocks[0].attn.phi_tail.data[0] = 0.5
    with pytest.raises(PropertyViolation, match="LOCAL fails"):
        check_properties(model)


def test_an_absolute_positional_table_is_not_periodic():
    ape = to_ape(compile(parse(LOCAL_PERIODIC)), 32)
    with pytest.raises(PropertyViolation, match="PERIODIC fails"):
        check_properties(ape)


def test_non_finite_weights_are_rejected():
    model = compile(parse(LOCAL_PERIODIC))
    model.blocks[0].attn.phi.data[0, 0] = float("nan")
    with pytest.raises(PropertyViolation, match="not finite"):
        check_properties(model)


APE_PROGRAMS = [("library", name) for name in library.names()] + [
    ("task", name) for name in ("majority", "bin_majority_interleave", "tomita_4", "aa_star", "d_2",
                                "sort")
]


@pytest.mark.parametrize("kind,name", APE_PROGRAMS)
def test_ape_translation_equals_the_limit_transformer_up_to_n(kind, name):
    program = library.load(name) if kind == "library" else registry.get(name).program("ape")
    checked = check(program)
    model = compile(checked)
    n = 64
    ape = to_ape(model, n)
    rng = np.random.default_rng(4)
    inputs, _ = random_inputs(checked, 60, n - 1, rng)
    offsets = [int(rng.integers(0, n - len(tokens))) for tokens in inputs]  # every position < N
    expected = per_position(run(model, inputs, offset=offsets, allow_unknown=True, raw=True))
    got = per_position(run(ape, inputs, offset=offsets, allow_unknown=True, raw=True))
    real = np.arange(n - 1)[None, :] < np.array([len(t) for t in inputs])[:, None]
    for output in expected:
        assert np.array_equal(expected[output][real], got[output][real]), output
    for block in ape.blocks:
        assert not bool(block.mlp.heaviside.any()) and block.attn.phi.numel() == 0


def test_ape_translation_refuses_positions_past_its_table():
    ape = to_ape(compile(parse(LOCAL_PERIODIC)), 8)
    with pytest.raises(ValueError, match="past the positional table"):
        run(ape, ["a b"], offset=7, check_length=False)


def test_positional_regularizer_of_a_one_hot_translation():
    model = compile(parse(LOCAL_PERIODIC))
    bias = model.spec.local_bias
    for n in (16, 64):  # M[a, b] = phi(a - b): (1/N) sum over offsets d of phi(d)^2 (N - d)
        expected = bias**2 * ((n - 1) + (n - 3)) / n
        assert positional_regularizer(to_ape(model, n)) == pytest.approx(expected, rel=1e-12)
    assert positional_regularizer(to_ape(compile(library.load("dyck1")), 16)) == 0.0


def test_translation_needs_a_checked_model():
    model = compile(parse(LOCAL_PERIODIC))
    model.blocks[0].attn.phi_tail.data[0] = 1.0
    with pytest.raises(PropertyViolation):
        to_ape(model, 16)
    with pytest.raises(TranslationError):
        to_ape(compile(parse(LOCAL_PERIODIC)), 1)


@pytest.mark.parametrize("source", ["dyck1", "task:unique_copy"])
def test_export_round_trip(tmp_path, source):
    program = library.load(source) if ":" not in source else registry.get(source[5:]).program("ape")
    checked = check(program)
    model = compile(checked)
    save(model, tmp_path / "model")
    loaded = load(tmp_path / "model.safetensors")
    assert loaded.spec == model.spec
    inputs, offsets = random_inputs(checked, 10, 100, np.random.default_rng(0))
    a = per_position(run(model, inputs, offset=offsets, allow_unknown=True))
    b = per_position(run(loaded, inputs, offset=offsets, allow_unknown=True))
    assert all(np.array_equal(a[k], b[k]) for k in a)  # padding included: same model, same values
    from safetensors import safe_open

    with safe_open(str(tmp_path / "model.safetensors"), "pt") as handle:
        names = set(handle.keys())
    assert {"blocks.0.attn.phi", "blocks.0.mlp.b_in"} <= names
    assert "embed.W_E" in names or "embed.W_E.values" in names
    assert any(n.startswith("blocks.0.attn.W_V") for n in names)


def test_out_of_range_sparse_indices_are_reported(tmp_path):
    from safetensors.torch import load_file, save_file

    model = compile(registry.get("unique_copy").program("ape"))
    weights, _ = save(model, tmp_path / "m")
    tensors = load_file(str(weights))
    name = next(k for k in tensors if k.endswith(".indices"))
    tensors[name][0, 0] = 10**9  # points outside the weight
    save_file(tensors, str(weights))
    with pytest.raises(ExportError, match="is corrupted"):
        load(tmp_path / "m")


def test_corrupted_files_are_reported(tmp_path):
    model = compile(library.load("dyck1"))
    weights, config = save(model, tmp_path / "m")
    with pytest.raises(ExportError, match="no such file"):
        load(tmp_path / "missing")
    weights.write_bytes(b"not a safetensors file")
    with pytest.raises(ExportError, match="corrupted weights"):
        load(tmp_path / "m")
    config.write_text("{broken")
    with pytest.raises(ExportError, match="corrupted model config"):
        load(tmp_path / "m")
    config.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ExportError, match="not a crasp-limit-transformer config"):
        load(tmp_path / "m")


def test_plot_attention_returns_a_figure_and_leaves_matplotlib_alone(tmp_path):
    import sys

    matplotlib = pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from limit_transformer.plot import plot_attention

    backend = matplotlib.get_backend()
    pyplot = sys.modules.get("matplotlib.pyplot")
    figures = pyplot.get_fignums() if pyplot else None
    figure = plot_attention(compile(library.load("contains_ab")), "b a b")
    assert isinstance(figure, Figure) and matplotlib.get_backend() == backend
    assert sys.modules.get("matplotlib.pyplot") is pyplot and (pyplot.get_fignums() if pyplot else None) == figures
    assert [axis.get_title() for axis in figure.axes][:2] == ["layer 0 head 0: uniform", "layer 0 head 1: offset 1"]
    figure.savefig(tmp_path / "heads.png")
    assert (tmp_path / "heads.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
