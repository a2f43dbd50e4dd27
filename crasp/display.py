"""Rich display in notebooks: self-contained HTML for what a user holds (a program, a run, a
prediction, a verification, a decision, a compiled model, a validation).

The building blocks (:class:`Html`, :func:`escape`, :func:`table`, :func:`details`, :func:`badge`,
:func:`view`, one small stylesheet) are shared by every package; each class's ``_repr_html_``
calls one renderer below. The HTML loads nothing: no script, no stylesheet or font from the
network; a figure is an inline base64 PNG.

This module imports nothing of the toolkit when it runs (the types it renders are named for the
type checker only), so that every class, ``crasp.ast.Program`` included, may call it without an
import cycle; a renderer reads the object it is given.

>>> page = program_html("<program>", 'A = #"<" >= 1')
>>> "&quot;&lt;&quot;" in page, "crasp.check(program)" in page
(True, True)
>>> badge("does not generalize")
"<span class='badge bad'>does not generalize</span>"
"""

from __future__ import annotations

import base64
import html
import io
import re
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # the types rendered here live in higher layers; nothing of theirs is imported at run time
    from limit_transformer.model import LimitTransformer
    from tasks.predict import Prediction
    from tasks.regular.decide import Decision
    from tasks.verify import Report
    from validation.runs.sweep import Validation

    from .interpreter import RunResult

ELLIPSIS = "…"
MAX_POSITIONS = 64
"""A run's table shows at most this many positions (both ends of a longer input)."""
MAX_INPUTS = 10
"""A run's view shows at most this many inputs."""
OPEN_ROWS = 40
"""A long table (definitions, residual directions) starts folded when it has more rows than this."""


# ---------------------------------------------------------------- building blocks


class Html(str):
    """Markup that is safe to insert as is (every other string is escaped)."""

    __slots__ = ()


def escape(value: object) -> Html:
    """``value`` as HTML text: markup stays markup, anything else is escaped.

    >>> escape('<bos> & "a"'), escape(Html("<b>x</b>"))
    ('&lt;bos&gt; &amp; &quot;a&quot;', '<b>x</b>')
    """
    return value if isinstance(value, Html) else Html(html.escape(str(value), quote=True))


def join(parts: Iterable[object], separator: str = "") -> Html:
    """The parts, escaped, one after another."""
    return Html(escape(separator).join(escape(part) for part in parts))


def element(name: str, *content: object, cls: str | None = None, title: str | None = None) -> Html:
    """``<name class=... title=...>content</name>``."""
    attributes = (f" class='{escape(cls)}'" if cls else "") + (f" title='{escape(title)}'" if title else "")
    return Html(f"<{name}{attributes}>{join(content)}</{name}>")


def table(headers: Sequence[object], rows: Iterable[Sequence[object]], *, cls: str | None = None) -> Html:
    """A table: a header row, then rows of cells (a cell that is an ``element("td", ...)`` or
    ``element("th", ...)`` is kept, any other value becomes a plain ``<td>``).

    >>> table(["n", "R(N)"], [[1, 2]])
    '<table><thead><tr><th>n</th><th>R(N)</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>'
    """
    head = join(element("th", h) for h in headers)
    body = join(element("tr", *(_cell(c) for c in row)) for row in rows)
    return element("table", Html(f"<thead><tr>{head}</tr></thead>"), element("tbody", body), cls=cls)


def _cell(value: object) -> Html:
    if isinstance(value, Html) and (value.startswith("<td") or value.startswith("<th")):
        return value
    return element("td", value)


def facts(pairs: Iterable[tuple[object, object]]) -> Html:
    """A two-column table of names and values (pairs whose value is None are left out)."""
    rows = join(element("tr", element("th", name), element("td", value)) for name, value in pairs
                if value is not None)
    return element("table", element("tbody", rows), cls="facts")


def details(summary: object, *body: object, open: bool = False) -> Html:
    """A section that folds: ``summary`` always shown, ``body`` on a click."""
    return Html(f"<details{' open' if open else ''}><summary>{escape(summary)}</summary>{join(body)}</details>")


def pre(text: object, cls: str | None = None) -> Html:
    """Preformatted text (newlines kept)."""
    return element("pre", text, cls=cls)


def items(lines: Iterable[object]) -> Html:
    """A bulleted list (empty where there are no lines)."""
    shown = [element("li", line) for line in lines]
    return element("ul", *shown) if shown else Html("")


TONES = {"generalizes": "good", "pass": "good", "accept": "good", "in c-rasp": "good", "kept": "good",
         "does not generalize": "bad", "fail": "bad", "reject": "bad", "not in c-rasp": "bad",
         "collapsed": "bad", "undetermined": "open", "conflict": "open"}
"""The colour of a badge by its (lower-case) text: good, bad or open (anything else is plain)."""


def badge(text: object, tone: str | None = None) -> Html:
    """A verdict as a coloured label (its tone read from :data:`TONES` unless given)."""
    tone = tone or TONES.get(str(text).lower(), "plain")
    return element("span", text, cls=f"badge {tone}")


def figure_png(figure: Any, dpi: int = 80) -> Html:
    """A matplotlib figure as an inline ``<img>`` (a base64 PNG: nothing is fetched)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return Html(f"<img alt='figure' src='data:image/png;base64,{data}'/>")


STYLE = """
.crasp-view { font: 13px/1.4 system-ui, sans-serif; margin: 0.3em 0; }
.crasp-view .head { font-weight: bold; font-size: 14px; margin-bottom: 0.3em; }
.crasp-view table { border-collapse: collapse; margin: 0.3em 0 0.6em; }
.crasp-view th, .crasp-view td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
.crasp-view thead th, .crasp-view table.facts th { background: #f4f4f4; }
.crasp-view table.grid td { text-align: center; font-family: ui-monospace, monospace; }
.crasp-view td.tok { font-weight: bold; background: #eef3fb; }
.crasp-view td.t { background: #c8ebc8; } .crasp-view td.f { color: #999; } .crasp-view td.n { background: #fff8e0; }
.crasp-view pre { background: #f8f8f8; padding: 0.4em 0.6em; margin: 0.3em 0; white-space: pre-wrap; }
.crasp-view details { margin: 0.2em 0 0.2em 0.5em; } .crasp-view summary { cursor: pointer; }
.crasp-view .badge { border-radius: 3px; padding: 0 5px; font-weight: bold; background: #e4e4e4; }
.crasp-view .badge.good { background: #c8ebc8; color: #14521a; } .crasp-view .badge.bad { background: #f6caca; color: #7a1010; }
.crasp-view .badge.open { background: #f4e6b8; color: #5c4500; }
.crasp-view .kw { color: #8a2be2; font-weight: bold; } .crasp-view .nm { color: #1f4e99; }
.crasp-view .num { color: #b25d00; } .crasp-view .op { color: #a31515; } .crasp-view .str { color: #067d17; }
.crasp-view .com { color: #888; font-style: italic; } .crasp-view .note { color: #666; }
"""
"""The one stylesheet of every view (scoped to ``.crasp-view``)."""


def view(title: object, *parts: object) -> Html:
    """A whole rendering: the stylesheet, a title line, the parts."""
    return Html(f"<style>{STYLE}</style><div class='crasp-view'>{element('div', title, cls='head')}"
                f"{join(parts)}</div>")


def shown_positions(length: int, limit: int = MAX_POSITIONS) -> list[int | None]:
    """The 0-based positions a table of ``length`` shows: all, or both ends of a long input
    around an ellipsis (None).

    >>> shown_positions(3), shown_positions(5, limit=2)
    ([0, 1, 2], [0, None, 4])
    """
    if length <= limit:
        return list(range(length))
    half = limit // 2
    return [*range(half), None, *range(length - half, length)]


def _grid_row(name: object, values: Sequence[Any], columns: Sequence[int | None]) -> Html:
    """A row of per-position values: Booleans as 1/0 (coloured), counts as numbers."""
    cells = []
    for k in columns:
        if k is None:
            cells.append(element("td", ELLIPSIS))
        elif isinstance(values[k], bool):
            cells.append(element("td", "1" if values[k] else "0", cls="t" if values[k] else "f"))
        elif values[k] is None:
            cells.append(element("td", "-"))
        else:
            cells.append(element("td", values[k], cls="n" if isinstance(values[k], int) else None))
    return element("tr", element("th", name), *cells)


# ---------------------------------------------------------------- programs


_TOKEN = re.compile(r"""
    (?P<com>//[^\n]*)
  | (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<kw>\#import\b|\b(?:alphabet|accept|next|if|else|true|false|min|max|mod|in)\b)
  | (?P<num>\b[0-9]+\b)
  | (?P<nm>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op><=|>=|==|!=|&&|\|\||[-+*\#<>=!\[\](){},])
""", re.VERBOSE)


def highlight(source: str) -> Html:
    """Program text with a span per keyword, name, number, operator, string and comment; every
    character is kept, so the text of the result is ``source``.

    >>> highlight('A = #"a" >= 1')
    "<span class='nm'>A</span> <span class='op'>=</span> <span class='op'>#</span><span class='str'>&quot;a&quot;</span> <span class='op'>&gt;=</span> <span class='num'>1</span>"
    """
    out: list[str] = []
    end = 0
    for match in _TOKEN.finditer(source):
        out.append(escape(source[end:match.start()]))
        out.append(element("span", match.group(), cls=match.lastgroup))
        end = match.end()
    out.append(escape(source[end:]))
    return Html("".join(out))


def program_html(name: str, source: str | None, *, kind: str | None = None, depth: int | None = None,
                 outputs: str | None = None, alphabet: Collection[str] = (),
                 definitions: Sequence[tuple[str, str, int, str]] = (), checked: bool = True) -> Html:
    """A program: its source highlighted (``source`` None: not known), and, for a checked program,
    its class (``kind``), count depth, outputs, alphabet and a table of its ``definitions`` as
    (name, sort, depth, expression) rows. A program given without ``kind`` is shown as not
    checked yet; one with ``checked`` False shows what its syntax tells, with a note that the checker
    adds the sorts and outputs."""
    title = f"C-RASP program {name}"
    shown = (pre(highlight(source), cls="src") if source is not None else
             element("p", "(built in Python: crasp.format_program(program) prints its source)", cls="note"))
    if kind is None:
        hint = element("p", "not checked: crasp.check(program) shows its class, count depth and the sort and "
                            "depth of every definition", cls="note")
        return view(title, shown, hint)
    note = () if checked else (element("p", "not checked: crasp.check(program) adds each definition's sort, the "
                                                 "output and the alphabet", cls="note"),)
    summary = facts([("class", kind), ("count depth", depth), ("definitions", len(definitions)),
                     ("output", outputs), ("alphabet", "{" + ", ".join(sorted(alphabet)) + "}" if alphabet else None)])
    rows = [[element("td", element("span", d_name, cls="nm"), title=expression), sort, d_depth]
            for d_name, sort, d_depth, expression in definitions]
    table_ = details(f"definitions ({len(rows)})", table(["name", "sort", "depth"], rows),
                     open=len(rows) <= OPEN_ROWS)
    return view(title, summary, *note, shown, table_)


# ---------------------------------------------------------------- runs


def run_result_html(result: RunResult) -> Html:
    """A run: per input its tokens by position, every recorded output (and, for a traced run,
    every definition) at every position, and the verdict."""
    count = len(result.tokens)
    parts: list[object] = []
    for index in range(min(count, MAX_INPUTS)):
        tokens = result.tokens[index]
        n = int(result.lengths[index])
        offset = int(result.offsets[index])
        columns = shown_positions(n)
        rows = [element("tr", element("th", "token"),
                        *(element("td", ELLIPSIS if k is None else tokens[k], cls="tok") for k in columns))]
        if result.values is not None:
            rows += [_grid_row(name, array[index, :n].tolist(), columns) for name, array in result.values.items()]
        if result.accept_values is not None:
            rows.append(_grid_row("accept", result.accept_values[index, :n].tolist(), columns))
        if result.next is not None:
            rows += [_grid_row(f'next "{token}"', array[index, :n].tolist(), columns)
                     for token, array in result.next.items()]
            chosen = result.next_tokens(index)
            rows.append(element("tr", element("th", "next token"),
                                *(element("td", ELLIPSIS if k is None else "-" if chosen[k] is None else chosen[k])
                                  for k in columns)))
        head = join(element("th", ELLIPSIS if k is None else offset + k + 1) for k in columns)
        grid = element("table", Html(f"<thead><tr><th>position</th>{head}</tr></thead>"),
                       element("tbody", *rows), cls="grid")
        verdict = (badge("accept" if result.accept[index] else "reject") if result.accept is not None else "")
        parts.append(element("div", f"input {index + 1} ({n} tokens, offset {offset}) ", verdict))
        parts.append(grid)
    if count > MAX_INPUTS:
        parts.append(element("p", f"{ELLIPSIS} and {count - MAX_INPUTS} more inputs", cls="note"))
    return view(f"C-RASP run: {count} input{'s' if count != 1 else ''}", *parts)


def run_result_repr(result: RunResult) -> str:
    """A one-line ``repr`` of a run: the inputs' lengths and the verdicts (or the outputs)."""
    lengths = [int(n) for n in result.lengths[:8]]
    more = ", ..." if len(result.tokens) > 8 else ""
    shown = f"lengths {lengths}{more}"
    if result.accept is not None:
        shown += f", accept {result.accept[:8].tolist()}{more}"
    if result.next is not None:
        shown += f", next {sorted(result.next)}"
    traced = ", traced" if result.values is not None else ""
    return f"<RunResult of {len(result.tokens)} inputs: {shown}{traced}>"


# ---------------------------------------------------------------- predictions (tasks)


def _finding(finding: Any) -> Html:
    """One finding of a prediction, folded: its claim and summary, then details and references."""
    claim = finding.claim.value if finding.decisive else "no claim"
    strength = f" ({finding.strength.value})" if finding.strength is not None else ""
    carried = f", carried over from {finding.carried_from}" if finding.carried_from else ""
    summary = Html(badge(claim) + escape(f" {finding.source}{strength}{carried}: {finding.summary}"))
    body = [pre("\n".join(finding.details))] if finding.details else []
    if finding.references:
        body.append(details("references", items(finding.references)))
    return details(summary, *body) if body else element("div", summary)


def prediction_html(prediction: Prediction, titles: Mapping[str, str]) -> Html:
    """A prediction: per scheme (named by ``titles``) the verdict, its strength and reason (and
    the published label), then the layers and training length; every finding folded in a section
    of its own."""
    comparison = prediction.comparison()
    labels = {"ape": prediction.labels.ape, "nope": prediction.labels.nope}
    shown = {None: "-", True: "generalizes", False: "does not generalize"}
    rows = []
    for scheme, verdict in prediction.schemes.items():
        published = (f"{shown[labels[scheme]]} ({comparison[scheme]})" if scheme in comparison else "-")
        rows.append([titles.get(scheme, scheme), badge(verdict.verdict.value),
                     verdict.strength.value if verdict.strength else "-", verdict.brief, published])
    parts: list[object] = [table(["scheme", "verdict", "strength", "reason", "published"], rows)]
    for scheme, verdict in prediction.schemes.items():
        body: list[object] = [_finding(f) for f in verdict.findings]
        if verdict.references:
            body.append(details("references", items(verdict.references)))
        if verdict.skipped:
            body.append(element("p", f"not run (settled before their turn): {', '.join(verdict.skipped)}",
                                cls="note"))
        parts.append(details(f"{titles.get(scheme, scheme)}: {verdict.headline}", *body))
    if prediction.layers is not None:
        parts.append(details(f"layers: {prediction.layers.brief()}", pre("\n".join(prediction.layers.lines()))))
    if prediction.training_length is not None:
        length = prediction.training_length
        parts.append(details(f"training length: {length.brief()}", pre("\n".join(length.lines()))))
    if prediction.rejected:
        parts.append(details(f"{len(prediction.rejected)} given program(s) rejected", pre("\n\n".join(prediction.rejected))))
    analysis = prediction.communication
    if analysis is not None and analysis.table:
        sizes = [[s.n, s.rows, s.bits, "exact" if s.exact else f"lower bound ({s.alice} x {s.bob} sampled)"]
                 for s in analysis.table]
        parts.append(details(f"communication: {analysis.growth.kind}",
                             element("p", analysis.split.description),
                             table(["N", "R(N)", "bits", "how"], sizes),
                             element("p", analysis.growth.statement), items(analysis.notes)))
    timing = f"; {prediction.timing.describe()}" if prediction.timing else ""
    parts.append(element("p", f"budget: {prediction.budget.name or 'custom'}{timing}", cls="note"))
    return view(f"Prediction for {prediction.task} ({prediction.family})", *parts)


def prediction_repr(prediction: Prediction) -> str:
    """A one-line ``repr`` of a prediction: the verdict and strength per scheme."""
    verdicts = "; ".join(f"{s} {v.verdict.value}" + (f" ({v.strength.value})" if v.strength else "")
                         for s, v in prediction.schemes.items())
    return f"<Prediction for {prediction.task}: {verdicts}>"


# ---------------------------------------------------------------- verification (tasks)


def report_html(report: Report) -> Html:
    """A verification: PASS with what was checked, or FAIL with the counterexample and its trace."""
    status = "PASS" if report.ok else "FAIL"
    checked = facts(report.checked_facts())
    title = Html(badge(status) + escape(f" {report.task} with {report.program}"))
    found = report.counterexample
    if found is None:
        return view(title, checked)
    where = facts(found.facts().items())
    trace = Html(found.trace._repr_html_()) if found.trace is not None else element("p", "no trace", cls="note")
    return view(title, element("div", "counterexample"), where, details("the program's trace on it", trace, open=True),
                details("what was checked", checked))


def report_repr(report: Report) -> str:
    """A one-line ``repr`` of a verification: PASS or FAIL, and what was checked or where it failed."""
    if report.counterexample is None:
        return (f"<Report PASS {report.task} with {report.program}: {report.exhaustive_inputs} exhaustive, "
                f"{report.sampled_inputs} sampled, {report.derived_inputs} derived inputs, {report.checks} checks>")
    found = report.counterexample
    shown = found.facts()
    return (f"<Report FAIL {report.task} with {report.program}: {shown['input']!r} at position "
            f"{found.position + 1}, expected {shown['expected']}, got {shown['program gives']}>")


# ---------------------------------------------------------------- regular languages (tasks)


def decision_html(decision: Decision) -> Html:
    """A regular-language decision: in C-RASP or not, the criterion, the obstruction, the certificate."""
    verdict = "in C-RASP" if decision.member else "not in C-RASP"
    return view(Html(badge(verdict) + escape(" regular-language decision (NoPE class)")),
                facts([("criterion", decision.criterion), ("obstruction", decision.obstruction)]),
                element("div", "certificate"), pre(decision.certificate),
                details("references", items(decision.references)))


# ---------------------------------------------------------------- Limit Transformers


def limit_transformer_html(model: LimitTransformer) -> Html:
    """A compiled Limit Transformer: its size, a table of layers, one of heads (kind, phi support,
    what each reads and writes) and one of the residual directions."""
    spec = model.spec
    data = model.summary()
    positions = f"periodic, period {spec.period}" if spec.wrap else f"{spec.period} absolute rows"
    summary = facts([("layers", data["layers"]), ("residual width", data["width"]),
                     ("parameters", f"{data['parameters']:,} ({data['nonzero_parameters']:,} nonzero)"),
                     ("dtype", data["dtype"]), ("positions", positions),
                     ("outputs", ", ".join(data["outputs"])), ("guaranteed to length", spec.max_length or None)])
    layers = table(["layer", "heads", "MLP width"],
                   [[layer, len(block["heads"]), block["mlp_width"]] for layer, block in enumerate(data["blocks"])])
    heads = []
    writer: dict[str, str] = {}
    for layer, block in enumerate(data["blocks"]):
        for h, head in enumerate(block["heads"]):
            writes = spec.heads[layer][h].writes
            writer.update((label, f"layer {layer} head {h}") for label in writes)
            kind = "uniform" if head["kind"] == "uniform" else f"offset {head['offset']}"
            heads.append([layer, h, kind, ", ".join(map(str, head["phi_support"])) or "-",
                          ", ".join(head["reads"]), ", ".join(writes) or "-"])
    residual = [[k, label, writer.get(label, "")] for k, label in enumerate(spec.labels)]
    return view(f"Limit Transformer for {spec.source or 'a program'}", summary,
                element("div", "layers"), layers,
                details(f"heads ({len(heads)})", table(["layer", "head", "kind", "phi support", "reads", "writes"],
                                                       heads), open=True),
                details(f"residual directions ({len(residual)})", table(["index", "label", "written by"], residual),
                        open=len(residual) <= OPEN_ROWS))


# ---------------------------------------------------------------- validation


def validation_html(validation: Validation) -> Html:
    """A validation: a row per run (seed, counted, steps, time, accuracy per length bin) and,
    where matplotlib is installed, a plot of accuracy by bin."""
    bins = validation.plan.task.bins
    labels = [f"{low}-{high}" for low, high in bins]
    counted = {run.spec.seed for run in validation.counted}
    rows = [[run.spec.seed, "yes" if run.spec.seed in counted else "no", run.steps,
             "yes" if run.stopped_early else "no", f"{run.wall_time:.1f} s",
             *(f"{a:.3f}" for a in run.accuracy)] for run in validation.runs]
    summary = facts([("model", validation.plan.model.label),
                     ("training", f"{validation.plan.train.steps} steps"),
                     ("runs", f"{len(validation.runs)} ({len(validation.counted)} counted)"),
                     ("note", validation.plan.note or None)])
    runs = table(["seed", "counted", "steps", "stopped early", "time", *(f"acc {b}" for b in labels)], rows)
    return view(f"Validation of {validation.task} ({validation.variant}, preset {validation.preset})",
                summary, runs, _accuracy_plot(validation, labels))


def _accuracy_plot(validation: Validation, labels: Sequence[str]) -> Html:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return element("p", "(no plot: pip install 'crasp-lengthgen[plot]' for matplotlib)", cls="note")
    figure = Figure(figsize=(4.2, 2.6))
    axis = figure.subplots()
    counted = {run.spec.seed for run in validation.counted}
    for run in validation.runs:
        axis.plot(range(len(run.accuracy)), run.accuracy, marker="o",
                  linestyle="-" if run.spec.seed in counted else ":", label=f"seed {run.spec.seed}")
    axis.set_xticks(range(len(labels)), labels, fontsize=8)
    axis.set_ylim(-0.05, 1.05)
    axis.set_xlabel("length bin", fontsize=8)
    axis.set_ylabel("exact match", fontsize=8)
    if validation.runs:
        axis.legend(fontsize=7)
    return figure_png(figure)


def validation_repr(validation: Validation) -> str:
    """A one-line ``repr`` of a validation: the task, the runs and their accuracy on the longest bin."""
    longest = [round(run.accuracy[-1], 3) for run in validation.runs if run.accuracy]
    return (f"<Validation {validation.task} ({validation.variant}, preset {validation.preset}): {len(validation.runs)} "
            f"runs, {len(validation.counted)} counted; longest bin {longest}>")


__all__ = ["Html", "escape", "join", "element", "table", "facts", "details", "pre", "items", "badge", "figure_png",
           "view", "STYLE", "TONES", "highlight", "program_html",
           "run_result_html", "run_result_repr", "prediction_html", "prediction_repr", "report_html", "report_repr",
           "decision_html", "limit_transformer_html", "validation_html", "validation_repr"]
