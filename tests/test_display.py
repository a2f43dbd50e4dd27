"""Rich display: every object a user holds renders as self-contained, well-formed HTML that says
what the object holds (crasp.display and the ``_repr_html_`` methods that call it).

Each rendering is read back with a strict little parser: tags balanced, no script, no external
URL, figures only as inline PNG; the facts are compared with the objects themselves."""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

import crasp
from crasp import library
from crasp.display import highlight
from crasp.trace import trace

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


@dataclass
class Parsed:
    text: str
    tags: list[str]
    spans: list[tuple[str, str]]
    """(class, text) of every <span>."""
    tables: list[list[list[str]]]
    """Every table as rows of cell texts (nested tables are tables of their own)."""
    images: list[str] = field(default_factory=list)
    details: int = 0


class _Strict(HTMLParser):
    """Collects text, tags, spans and tables; fails on anything unbalanced, scripted or external."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []
        self.spans: list[tuple[str, list[str]]] = []
        self.open_spans: list[int] = []
        self.tables: list[list[list[str]]] = []
        self.open_tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None
        self.images: list[str] = []
        self.styles: list[str] = []

    def handle_starttag(self, tag, attrs):
        self._start(tag, dict(attrs))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._start(tag, dict(attrs))

    def _start(self, tag: str, attrs: dict) -> None:
        assert tag not in ("script", "link", "iframe", "object"), f"<{tag}> in the rendering"
        for name, value in attrs.items():
            assert not (value or "").lower().startswith(("http:", "https:", "//")), f"external {name}={value!r}"
        self.tags.append(tag)
        if tag == "img":
            assert attrs.get("src", "").startswith("data:image/png;base64,"), "an image that is not an inline PNG"
            self.images.append(attrs["src"])
        elif tag == "span":
            self.spans.append((attrs.get("class", ""), []))
            self.open_spans.append(len(self.spans) - 1)
        elif tag == "table":
            self.open_tables.append([])
        elif tag == "tr":
            self.open_tables[-1].append([])
        elif tag in ("td", "th"):
            self.open_tables[-1][-1].append("")
            self.cell = []

    def handle_endtag(self, tag):
        assert tag not in VOID, f"</{tag}> closes a void element"
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()
        if tag == "span":
            self.open_spans.pop()
        elif tag == "table":
            self.tables.append(self.open_tables.pop())
        elif tag in ("td", "th") and self.cell is not None:
            self.open_tables[-1][-1][-1] = "".join(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style":
            self.styles.append(data)
            return
        self.text.append(data)
        for index in self.open_spans:
            self.spans[index][1].append(data)
        if self.cell is not None:
            self.cell.append(data)


def parse(page: str) -> Parsed:
    """Read a rendering strictly (see the module docstring)."""
    assert isinstance(page, str) and page
    lowered = page.lower()
    assert "http://" not in lowered and "https://" not in lowered, "a URL in the rendering"
    checker = _Strict()
    checker.feed(page)
    checker.close()
    assert not checker.stack, f"unclosed tags: {checker.stack}"
    style = " ".join(checker.styles).lower()
    assert "@import" not in style and "url(" not in style and "@font-face" not in style
    return Parsed("".join(checker.text), checker.tags, [(cls, "".join(t)) for cls, t in checker.spans],
                  checker.tables, checker.images, checker.tags.count("details"))


def row(parsed: Parsed, first: str) -> list[str]:
    """The first table row whose first cell is ``first``."""
    return next(r for t in parsed.tables for r in t if r and r[0] == first)


# ---------------------------------------------------------------- the checker itself


@pytest.mark.parametrize("page", [
    "<div><span>x</div></span>",
    "<div>open",
    "<script src='x.js'></script>",
    "<img src='https://example.org/x.png'/>",
    "<style>@import 'x.css';</style>",
    "<img src='x.png'/>",
])
def test_the_checker_refuses_bad_html(page):
    with pytest.raises(AssertionError):
        parse(page)


# ---------------------------------------------------------------- programs


SOURCE = '// keeps <b>tags</b> & quotes\nalphabet {"x"}\nC = #"<" - 2 * #"b"\nV = C > 0 && #[i - j in {1}] "a" >= 1\n' \
         'D = #V == 0 && i mod 2 in {1}\n'


def test_a_program_shows_its_source_highlighted_and_escaped():
    program = crasp.parse(SOURCE)
    page = program._repr_html_()
    parsed = parse(page)
    assert "b" not in parsed.tags and "&lt;b&gt;tags" in page  # the comment's markup is text
    assert SOURCE.rstrip("\n") in parsed.text  # every character of the source, in order
    spans = [s for s in parsed.spans if s[0] != "badge"]
    assert ("com", "// keeps <b>tags</b> & quotes") in spans
    assert ("kw", "alphabet") in spans and ("kw", "mod") in spans and ("kw", "in") in spans
    assert ("str", '"<"') in spans and ("nm", "C") in spans and ("num", "2") in spans
    assert {text for cls, text in spans if cls == "op"} >= {"=", "#", "-", "*", ">", "&&", "==", "[", "]", "{", "}"}


def test_the_highlighter_keeps_every_character():
    source = crasp.library.path("dyck1").read_text()
    assert parse(highlight(source)).text == source


def test_a_checked_program_shows_its_class_depth_and_definitions():
    parsed = parse(crasp.check(crasp.parse(SOURCE))._repr_html_())
    assert row(parsed, "class")[1].startswith("C-RASP[periodic, local]")
    assert row(parsed, "count depth")[1] == "2"
    definitions = next(t for t in parsed.tables if t[0] == ["name", "sort", "depth"])
    assert definitions[1:] == [["C", "count", "1"], ["V", "Boolean", "1"], ["D", "Boolean", "2"]]

    dyck = crasp.check(library.load("dyck1"))
    parsed = parse(dyck._repr_html_())
    assert row(parsed, "class")[1] == "plain C-RASP (NoPE)"
    assert row(parsed, "count depth")[1] == str(dyck.info.depth) == "2"
    assert row(parsed, "output")[1] == "accept D"
    assert [r[0] for r in next(t for t in parsed.tables if t[0][0] == "name")[1:]] == ["C_open", "C_close", "V", "D"]


def test_definition_depths_follow_references():
    checked = crasp.check(crasp.parse('A = #"a"\nB = #(A > 1)\nC = B + A\nD = #(C > #"b") > 0\nE = D'))
    definitions = next(t for t in parse(checked._repr_html_()).tables if t[0] == ["name", "sort", "depth"])
    assert [(r[0], r[2]) for r in definitions[1:]] == [("A", "1"), ("B", "2"), ("C", "2"), ("D", "3"), ("E", "3")]
    assert row(parse(checked._repr_html_()), "count depth")[1] == str(checked.info.depth) == "3"


def test_an_unchecked_program_shows_its_source_and_what_its_syntax_tells():
    parsed = parse(library.load("dyck1")._repr_html_())
    assert "C_open = #\"(\"" in parsed.text and "crasp.check(program)" in parsed.text
    assert row(parsed, "class")[1] == "plain C-RASP (NoPE)" and row(parsed, "count depth")[1] == "2"
    definitions = next(t for t in parsed.tables if t[0] == ["name", "sort", "depth"])
    assert [(r[0], r[2]) for r in definitions[1:]] == [("C_open", "1"), ("C_close", "1"), ("V", "1"), ("D", "2")]
    both = crasp.parse('A = #[i - j in {1}] "a"\nB = #(A > 0 && i mod 2 == 0)\naccept B > 0')
    assert row(parse(both._repr_html_()), "class")[1] == "C-RASP[periodic, local] (APE)"
    local = crasp.parse('A = #[i - j in {1}] "a"\naccept A > 0')
    assert row(parse(local._repr_html_()), "class")[1] == "C-RASP[local] (APE)"
    assert row(parse(crasp.check(local)._repr_html_()), "class")[1].startswith("C-RASP[periodic, local] (APE)")
    importing = parse(library.load("aa_star_crasp")._repr_html_())  # what it imports is the checker's to know
    assert "crasp.check(program)" in importing.text and not any(r and r[0] == "class" for t in importing.tables for r in t)
    from crasp import builder as b

    pb = b.ProgramBuilder()
    pb.accept(pb.let("Seen", b.count(b.tok("a")) >= 1))
    built = pb.build()
    assert built.text is None and "crasp.format_program(program)" in parse(built._repr_html_()).text
    checked = parse(crasp.check(built)._repr_html_())  # checked, a built program shows its source
    assert 'Seen = #"a" >= 1' in checked.text and row(checked, "count depth")[1] == "1"


def test_a_checked_program_has_a_short_repr():
    text = repr(crasp.check(library.load("dyck1")))
    assert "\n" not in text and len(text) < 200
    assert "library/dyck1.cr" in text and "4 definitions" in text and "depth 2" in text


# ---------------------------------------------------------------- runs and traces


def test_a_run_shows_every_output_per_position():
    inputs = ["( ( ) )", "( ) ) ("]
    result = crasp.run(library.load("dyck1"), inputs, trace=True)
    parsed = parse(result._repr_html_())
    grids = [t for t in parsed.tables if t[0][0] == "position"]
    assert len(grids) == 2
    for index, grid in enumerate(grids):
        assert grid[0] == ["position", *map(str, range(1, 5))]
        assert grid[1] == ["token", *inputs[index].split()]
        for name, values in result.values_at(index).items():
            assert next(r for r in grid if r[0] == name)[1:] == [str(int(v)) for v in values]
    verdicts = [text for cls, text in parsed.spans if "badge" in cls]
    assert verdicts == ["accept" if a else "reject" for a in result.accept]


def test_a_run_of_next_outputs_shows_them_and_the_chosen_token():
    task_program = crasp.parse('C0 = #"0"\nC1 = #"1"\nnext "0" = "<sep>" && C0 > C1\nnext "1" = "<sep>" && C1 > C0\n'
                               'next "<eos>" = !"<sep>"')
    result = crasp.run(task_program, ["0 0 1 <sep>"])
    grid = next(t for t in parse(result._repr_html_()).tables if t[0][0] == "position")
    assert next(r for r in grid if r[0] == 'next "0"')[1:] == ["0", "0", "0", "1"]
    assert next(r for r in grid if r[0] == "next token")[1:] == ["<eos>", "<eos>", "<eos>", "0"]


def test_a_long_run_shows_both_ends_and_a_big_batch_is_cut():
    long = " ".join(["(", ")"] * 100)
    result = crasp.run(library.load("dyck1"), [long] * 12)
    parsed = parse(result._repr_html_())
    grid = next(t for t in parsed.tables if t[0][0] == "position")
    assert grid[0][1] == "1" and grid[0][-1] == "200" and "…" in grid[0]
    assert len([t for t in parsed.tables if t[0][0] == "position"]) == 10 and "2 more inputs" in parsed.text
    text = repr(result)
    assert "\n" not in text and "12 inputs" in text and len(text) < 300


def test_a_trace_still_renders_strictly():
    parsed = parse(trace(library.load("contains_ab"), "b a b")._repr_html_())
    assert row(parsed, "Ends_ab")[1:] == ["0", "0", "1"]


# ---------------------------------------------------------------- predictions


@pytest.fixture(scope="module")
def majority_prediction():
    import tasks
    from tasks.findings import QUICK
    from tasks.predict import predict

    return predict(tasks.get("bin_majority"), budget=QUICK)


def test_a_prediction_shows_each_scheme_and_folds_every_finding(majority_prediction):
    from tasks.findings import SCHEME_TITLES

    prediction = majority_prediction
    parsed = parse(prediction._repr_html_())
    verdicts = next(t for t in parsed.tables if t[0][:3] == ["scheme", "verdict", "strength"])
    assert len(verdicts) == 1 + len(prediction.schemes)
    for scheme, verdict in prediction.schemes.items():
        line = row(parsed, SCHEME_TITLES[scheme])
        assert line[1] == verdict.verdict.value
        assert line[2] == (verdict.strength.value if verdict.strength else "-")
        assert line[3] == verdict.brief
        for finding in verdict.findings:
            assert finding.summary in parsed.text
            assert all(detail in parsed.text for detail in finding.details)
    findings = sum(len(v.findings) for v in prediction.schemes.values())
    assert parsed.details >= len(prediction.schemes) + sum(bool(f.details) for v in prediction.schemes.values()
                                                          for f in v.findings)
    assert findings and "layers: " + prediction.layers.brief() in parsed.text
    assert "training length: " + prediction.training_length.brief() in parsed.text
    text = repr(prediction)
    assert "\n" not in text and "ape generalizes (verified)" in text


def test_a_regex_prediction_carries_the_certificate():
    from tasks.findings import QUICK
    from tasks.predict import predict
    from tasks.regular import decide_nope, regex_task

    task = regex_task("(ab)*", "ab")
    parsed = parse(predict(task, budget=QUICK)._repr_html_())
    assert decide_nope(task.automaton).certificate in parsed.text
    assert row(parsed, "NoPE (no positions)")[1:3] == ["generalizes", "proof"]


def test_a_decision_shows_its_verdict_obstruction_and_certificate():
    from tasks.regular import decide_nope, from_regex

    outside = decide_nope(from_regex("(aa)*", "a"))
    parsed = parse(outside._repr_html_())
    assert ("badge bad", "not in C-RASP") in parsed.spans
    assert row(parsed, "obstruction")[1] == outside.obstruction
    assert outside.certificate in parsed.text and all(r in parsed.text for r in outside.references)
    inside = decide_nope(from_regex("(ab|ba)*", "ab"))
    parsed = parse(inside._repr_html_())
    assert ("badge good", "in C-RASP") in parsed.spans and inside.certificate in parsed.text


# ---------------------------------------------------------------- verification


def test_a_passing_report_says_what_was_checked():
    import tasks
    from tasks.verify import verify

    report = verify(tasks.get("bin_majority"), exhaustive_length=4, samples=2, max_length=20)
    parsed = parse(report._repr_html_())
    assert ("badge good", "PASS") in parsed.spans
    assert row(parsed, "exhaustive")[1].startswith(f"{report.exhaustive_inputs} inputs up to length 4")
    assert row(parsed, "checked")[1] == f"{report.checks} (input, offset, position) targets"
    assert "PASS" in repr(report) and "\n" not in repr(report)


def test_a_failing_report_shows_the_counterexample_and_its_trace():
    import tasks
    from tasks.verify import verify

    wrong = crasp.parse('alphabet {"<bos>", "<eos>", "<sep>"}\nC0 = #"0"\nC1 = #"1"\n'
                        'next "0" = "<sep>" && C0 < C1\nnext "1" = "<sep>" && C1 < C0\nnext "<eos>" = !"<sep>"')
    report = verify(tasks.get("bin_majority"), wrong, exhaustive_length=4, samples=2, max_length=20)
    found = report.counterexample
    assert found is not None and found.trace is not None
    parsed = parse(report._repr_html_())
    assert ("badge bad", "FAIL") in parsed.spans
    assert row(parsed, "input")[1] == " ".join(found.example.tokens)
    assert row(parsed, "position")[1].startswith(str(found.position + 1))
    trace_table = next(t for t in parsed.tables if t[0][0] == "position" and t[1][0] == "token")
    assert trace_table[1][1:] == list(found.trace.tokens)  # the trace, inline
    assert " ".join(found.example.tokens) in repr(report)


# ---------------------------------------------------------------- compiled models


@pytest.fixture(scope="module")
def contains_ab():
    from limit_transformer import compile

    return compile(library.load("contains_ab"))


def test_a_limit_transformer_shows_layers_heads_and_residual(contains_ab):
    model = contains_ab
    parsed = parse(model._repr_html_())
    layers = next(t for t in parsed.tables if t[0] == ["layer", "heads", "MLP width"])
    assert layers[1:] == [[str(k), str(len(b.attn.phi)), str(b.mlp.W_in.shape[1])] for k, b in enumerate(model.blocks)]
    heads = next(t for t in parsed.tables if t[0][:3] == ["layer", "head", "kind"])
    kinds = [h.kind if h.kind == "uniform" else f"offset {h.offset}" for layer in model.spec.heads for h in layer]
    assert [r[2] for r in heads[1:]] == kinds and "offset 1" in kinds
    residual = next(t for t in parsed.tables if t[0][:2] == ["index", "label"])
    assert [r[1] for r in residual[1:]] == list(model.spec.labels)
    assert row(parsed, "layers")[1] == str(model.spec.n_layers)


def test_the_attention_figure_has_one_axes_per_head_asked(contains_ab):
    pytest.importorskip("matplotlib")
    model = contains_ab
    assert len(model.spec.heads[0]) == 2
    assert len(model.attention_figure("a b a").axes) == sum(len(layer) for layer in model.spec.heads)
    assert [a.get_title() for a in model.attention_figure("a b", layer=0).axes] == [
        "layer 0 head 0: uniform", "layer 0 head 1: offset 1"]
    assert [a.get_title() for a in model.attention_figure(["a", "b"], head=0).axes] == [
        "layer 0 head 0: uniform", "layer 1 head 0: uniform"]
    assert len(model.attention_figure("a b", layer=0, head=1).axes) == 1
    with pytest.raises(ValueError, match="layers 0..1"):
        model.attention_figure("a b", layer=2)
    with pytest.raises(ValueError, match="head 2"):
        model.attention_figure("a b", head=2)


def test_the_attention_figure_names_the_extra_when_matplotlib_is_missing(contains_ab, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'crasp-lengthgen\[plot\]'"):
        contains_ab.attention_figure("a b")


# ---------------------------------------------------------------- validation


@pytest.fixture(scope="module")
def validation():
    from validation.config import ModelConfig, TrainConfig
    from validation.runs import protocol
    from validation.runs.store import Store
    from validation.runs.sweep import validate

    tiny = protocol.Preset("tiny", "display", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), TrainConfig(steps=2, batch_size=4, eval_every=2, test_size=4)),
        seeds=2, count_threshold=0.0)
    with tempfile.TemporaryDirectory() as folder:
        yield validate("bin_majority", tiny, "ape", store=Store(folder))


def test_a_validation_shows_its_runs_and_plot(validation):
    pytest.importorskip("matplotlib")
    parsed = parse(validation._repr_html_())
    runs = next(t for t in parsed.tables if t[0][:2] == ["seed", "counted"])
    bins = [f"acc {low}-{high}" for low, high in validation.plan.task.bins]
    assert runs[0][5:] == bins
    assert [r[0] for r in runs[1:]] == [str(run.spec.seed) for run in validation.runs]
    assert [r[5:] for r in runs[1:]] == [[f"{a:.3f}" for a in run.accuracy] for run in validation.runs]
    assert len(parsed.images) == 1
    assert "2 runs" in repr(validation) and "\n" not in repr(validation)


def test_a_validation_without_matplotlib_is_just_the_table(validation, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    parsed = parse(validation._repr_html_())
    assert not parsed.images and "crasp-lengthgen[plot]" in parsed.text
    assert any(t[0][:2] == ["seed", "counted"] for t in parsed.tables)
