"""Positional schemes: what each decides, and the variants that carry them."""

import pytest

from tasks import registry
from validation.config import ValidationError, Variant
from validation.positions import SCHEMES, PositionScheme

VARIANTS = {  # every variant name the CLI accepts -> (its stored name, its scheme)
    "ape": ("ape", "ape"), "nope": ("nope", "nope"), "ape_reg": ("ape_reg1e-4", "ape"),
    "ape_reg1e-3": ("ape_reg1e-3", "ape"), "rpe": ("rpe", "rpe"), "rpe8": ("rpe8", "rpe"), "upe": ("upe", "upe"),
    "upe8": ("upe8", "upe"), "sinusoidal": ("sinusoidal", "sin"), "abs": ("abs", "abs"), "abc": ("abc", "abc"),
    "abc2": ("abc2", "abc"), "abc-layers": ("abc-layers", "abc"), "abc1.5-layers": ("abc1.5-layers", "abc"),
}


def test_every_scheme_is_registered_under_its_name():
    assert list(SCHEMES) == ["ape", "nope", "rpe", "upe", "sin", "abs", "abc"]
    assert all(scheme.name == name for name, scheme in SCHEMES.items())


@pytest.mark.parametrize("name,table,relative,uniform,seq2seq,sinusoidal,scaffolded,calibrated", [
    ("ape", True, False, False, False, False, False, False),
    ("nope", False, False, False, False, False, False, False),
    ("rpe", False, True, False, False, False, False, False),
    ("upe", False, True, True, False, False, False, False),
    ("sin", False, False, False, True, True, False, False),
    ("abs", False, False, False, True, True, True, False),
    ("abc", False, False, False, True, False, False, True),
])
def test_what_each_scheme_decides(name, table, relative, uniform, seq2seq, sinusoidal, scaffolded, calibrated):
    scheme = SCHEMES[name]
    assert (scheme.absolute_table, scheme.relative, scheme.uniform, scheme.seq2seq) == (table, relative, uniform,
                                                                                        seq2seq)
    assert (scheme.sinusoidal, scheme.scaffolded, scheme.calibrated) == (sinusoidal, scaffolded, calibrated)
    assert scheme.bias_tables == (scaffolded or calibrated)
    assert scheme.relative_clip(12) == (12 if relative else 0)


def test_only_uniform_positions_read_the_leading_operand_width():
    multiplication, majority = registry.get("sabbaghi_multiplication"), registry.get("bin_majority")
    assert SCHEMES["upe"].uniform_width(multiplication) == 3
    assert all(s.uniform_width(majority) == 0 for name, s in SCHEMES.items() if name != "upe")
    with pytest.raises(registry.TaskError, match="fixed width"):
        SCHEMES["upe"].uniform_width(majority)


@pytest.mark.parametrize("text", list(VARIANTS))
def test_variants_parse_to_their_scheme_and_round_trip(text):
    name, scheme = VARIANTS[text]
    variant = Variant.parse(text)
    assert variant.name == name and variant.positions == scheme and variant.scheme is SCHEMES[scheme]
    assert variant.seq2seq == SCHEMES[scheme].seq2seq
    assert Variant.parse(variant.name) == variant


def test_a_variant_built_from_a_scheme_name_holds_the_scheme():
    assert Variant("rpe8", "rpe", clip=8) == Variant("rpe8", SCHEMES["rpe"], clip=8) == Variant.parse("rpe8")
    assert isinstance(Variant("ape", "ape").scheme, PositionScheme)
    with pytest.raises(ValidationError, match="no positional scheme"):
        Variant("xpe", "xpe")
