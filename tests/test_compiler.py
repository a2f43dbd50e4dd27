"""The compiled Limit Transformer equals the interpreter: library, task and random programs."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp import check, library, parse
from crasp.strategies import offsets, programs, token_sequences
from limit_transformer import CompileConfig, CompileError, ConfigError, compile, run
from limit_transformer.compiler import (
    BOS_TOKEN, allocate_layers, dependency_graph, eliminate_dead_slots, lower,
)
from limit_transformer.agreement import compare, random_inputs, verify
from tasks import registry

TASK_PROGRAMS = [
    (task.name, variant)
    for task in registry.all_tasks()
    for variant in ("ape", "nope")
    if task.programs.get(variant) is not None
    and not (variant == "nope" and task.programs.get("ape") is task.programs.get("nope"))
]


def _task_checked(name: str, variant: str):
    return check(registry.get(name).program(variant))


@pytest.mark.parametrize("name", library.names())
def test_library_programs_equal_the_interpreter(name):
    checked = check(library.load(name))
    report = verify(compile(checked), checked, max_length=512, count=40, seed=1)
    assert report.ok, report.summary()


@pytest.mark.parametrize("name,variant", TASK_PROGRAMS)
def test_task_programs_equal_the_interpreter(name, variant):
    checked = _task_checked(name, variant)
    model = compile(checked)
    rng = np.random.default_rng(7)
    task = registry.get(name)
    examples = [task.sample_train(rng) for _ in range(6)]  # inputs of the task's own shape
    report = compare(model, checked, [list(e.tokens) for e in examples], [e.offset for e in examples])
    assert report.ok, report.summary()
    count = 4 if model.parameter_count() > 10**7 else 16
    report = verify(model, checked, max_length=512, count=count, seed=3)
    assert report.ok, report.summary()


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(programs(), st.lists(token_sequences(max_size=512), min_size=1, max_size=4),
       st.lists(offsets(), min_size=4, max_size=4))
def test_random_programs_equal_the_interpreter(program, inputs, offs):
    checked = check(program)
    report = compare(compile(checked), checked, inputs, offs[: len(inputs)])
    assert report.ok, report.summary()


@settings(max_examples=25, deadline=None)
@given(programs(), st.integers(1, 3))
def test_extra_empty_layers_change_nothing(program, extra):
    checked = check(program)
    model = compile(checked)
    longer = model.with_empty_layers(extra)
    assert longer.spec.n_layers == model.spec.n_layers + extra
    inputs, offs = random_inputs(checked, 8, 128, np.random.default_rng(0))
    base = run(model, inputs, offset=offs, allow_unknown=True)
    more = run(longer, inputs, offset=offs, allow_unknown=True)
    for name in model.spec.outputs:
        got = base.accept_values if base.next is None else base.next[name]
        again = more.accept_values if more.next is None else more.next[name]
        assert np.array_equal(got, again)


def test_dense_attention_equals_the_prefix_sum_path():
    checked = check(library.load("contains_ab"))
    model = compile(checked)
    inputs, offs = random_inputs(checked, 6, 90, np.random.default_rng(2))
    from limit_transformer.runner import prepare

    tokens, positions, _ = prepare(model, inputs, np.asarray(offs))
    fast = model(tokens, positions)
    for block in model.blocks:  # tiny query/key weights: scores underflow to 0, the path is dense
        shape = (block.attn.n_heads, model.spec.d_model, 1)
        block.attn.W_Q = torch.nn.Parameter(torch.full(shape, 1e-300, dtype=torch.float64))
        block.attn.W_K = torch.nn.Parameter(torch.full(shape, 1e-300, dtype=torch.float64))
        assert block.attn.n_heads == 0 or not block.attn.positional_only()
    dense = model(tokens, positions)
    assert torch.allclose(fast, dense, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["dyck1", "anbncn", "contains_ab"])
def test_a_model_cast_or_changed_after_a_forward_pass_reads_its_new_weights(name):
    """The compact weights a forward pass caches follow a cast of the model and a change of its
    values (``.data`` replaced: same parameter, same version)."""
    checked = check(library.load(name))
    model = compile(checked)
    inputs, offs = random_inputs(checked, 3, 40, np.random.default_rng(4))
    assert compare(model, checked, inputs, offs).ok
    model.to(torch.float64)
    assert compare(model, checked, inputs, offs).ok
    from limit_transformer.runner import prepare

    tokens, positions, _ = prepare(model, inputs, np.asarray(offs))
    assert model(tokens, positions).dtype == torch.float64
    before = model(tokens, positions)
    unembed = model.W_U.data.clone()
    model.W_U.data = torch.zeros_like(unembed)  # a new storage: the outputs must all read False
    assert not model.outputs(before).any()
    model.W_U.data = unembed
    model.to(torch.float32)
    assert compare(model, checked, inputs, offs).ok


def test_float32_model_is_exact_on_long_inputs():
    checked = check(library.load("dyck1"))
    model = compile(checked, CompileConfig(max_length=20000, dtype="float32"))
    assert model.W_E.dtype == torch.float32
    report = verify(model, checked, max_length=20000, count=3, seed=5)
    assert report.ok, report.summary()


def test_heads_are_shared_within_a_layer():
    checked = check(parse('#import pred\nA = #"a" > #"b" && #[pred] "a" >= 1 && #[i - j in {1}] "b" == 0'
                          '\nB = #[i - j == 2] "a" + #"c" > 1\nC = A || B'))
    model = compile(checked)
    first = model.spec.heads[0]
    assert [h.kind for h in first] == ["uniform", "offset", "offset"]
    assert [h.offset for h in first] == [None, 1, 2]
    assert set(first[0].reads) >= {'"a"', '"b"', '"c"'}
    assert set(first[1].reads) == {'"a"', '"b"'}


def test_depth_follows_the_longest_path():
    checked = check(parse('A = #"a" > 0\nB = #A > 1\nC = #B > 2 && #"b" > 0'))
    lowered = eliminate_dead_slots(lower(checked, CompileConfig()))
    schedule = allocate_layers(lowered, dependency_graph(lowered))
    assert schedule.n_layers == 3  # three nested counts; the AND sits in the third layer's MLP


def test_residual_dimensions_are_named_after_definitions():
    model = compile(library.load("dyck1"))
    labels = set(model.spec.labels)
    assert {"bos", "tok", "1/(n+1)", "C_open/(n+1)", "C_close/(n+1)"} <= labels
    assert "V" in labels


def test_refuses_float32_beyond_its_precision_naming_the_definition():
    program = parse('C = #"a"\nD = 3 * C - 2 * #"b" + #"c"\nA = D > 0', source="prog.cr")
    with pytest.raises(CompileError) as error:
        compile(program, CompileConfig(max_length=10**6, dtype="float32"))
    assert "definition 'A'" in str(error.value) and "prog.cr:3" in str(error.value)
    assert compile(program, CompileConfig(max_length=10**4, dtype="float32")) is not None


def test_reserved_token_is_refused():
    with pytest.raises(CompileError, match="reserved"):
        compile(parse(f'A = #"{BOS_TOKEN}" > 0'))


@pytest.mark.parametrize("kwargs", [dict(dtype="float16"), dict(max_length=0), dict(device="tpu"),
                                    dict(max_length=2**30, dtype="float32"), dict(local_bias=-1.0)])
def test_impossible_configurations_are_refused(kwargs):
    with pytest.raises(ConfigError):
        CompileConfig(**kwargs)


def test_inputs_longer_than_the_guarantee_are_refused():
    from crasp import InputError

    model = compile(library.load("dyck1"), CompileConfig(max_length=8))
    with pytest.raises(InputError, match="exact up to 8"):
        run(model, ["( " * 9])
