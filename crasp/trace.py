"""Traces: every definition's value at every position, as a text table, HTML page or notebook view.

>>> from crasp.parser import parse
>>> print(trace(parse('C = #"a" - #"b"\\nA = C >= 1'), "a b a").to_text())
position    1    2    3
token       a    b    a
C           1    0    1
A           1    0    1
accept      1    0    1
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tabulate import tabulate

from .ast import Program
from .checker import CheckedProgram, Sort, check
from .display import ELLIPSIS, shown_positions
from .interpreter import RunResult, Tokens, run
from .printer import format_expr

@dataclass(frozen=True)
class TraceRow:
    name: str
    sort: Sort
    source: str
    values: tuple[int, ...]


@dataclass(frozen=True)
class Trace:
    """The values of one run: a row per definition and output, a column per position."""

    tokens: tuple[str, ...]
    offset: int
    rows: tuple[TraceRow, ...]
    verdict: bool | None

    def _cells(self, row: TraceRow, columns: list[int | None]) -> list[str]:
        return [ELLIPSIS if k is None else str(int(row.values[k])) for k in columns]

    def to_text(self, max_positions: int = 200) -> str:
        """A plain-text table (Booleans as 0/1); long inputs show their two ends."""
        columns = shown_positions(len(self.tokens), max_positions)
        header = ["position", *(ELLIPSIS if k is None else str(self.offset + k + 1) for k in columns)]
        table = [["token", *(ELLIPSIS if k is None else self.tokens[k] for k in columns)]]
        table += [[row.name, *self._cells(row, columns)] for row in self.rows]
        return tabulate(table, headers=header, tablefmt="plain", disable_numparse=True)

    def to_html(self, max_positions: int = 1000) -> str:
        """An HTML table (a fragment; :func:`html_page` wraps traces into a page)."""
        columns = shown_positions(len(self.tokens), max_positions)
        esc = html.escape
        head = "".join(
            f"<th>{ELLIPSIS if k is None else self.offset + k + 1}</th>" for k in columns
        )
        tokens = "".join(
            f"<td class='tok'>{ELLIPSIS if k is None else esc(self.tokens[k])}</td>" for k in columns
        )
        body = []
        for row in self.rows:
            cells = []
            for k in columns:
                if k is None:
                    cells.append(f"<td>{ELLIPSIS}</td>")
                elif row.sort is Sort.BOOL:
                    value = bool(row.values[k])
                    cells.append(f"<td class='{'t' if value else 'f'}'>{'1' if value else '0'}</td>")
                else:
                    cells.append(f"<td class='n'>{int(row.values[k])}</td>")
            title = esc(row.source)
            body.append(f"<tr><th class='name' title='{title}'>{esc(row.name)}</th>{''.join(cells)}</tr>")
        verdict = "" if self.verdict is None else f"<p class='verdict'>{'accept' if self.verdict else 'reject'}</p>"
        return (
            f"<div class='crasp-trace'>{verdict}<table><thead><tr><th class='name'>position</th>{head}</tr>"
            f"<tr><th class='name'>token</th>{tokens}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )

    def _repr_html_(self) -> str:
        return f"<style>{_CSS}</style>{self.to_html()}"


_CSS = """
.crasp-trace table { border-collapse: collapse; font: 13px ui-monospace, monospace; margin-bottom: 1.5em; }
.crasp-trace th, .crasp-trace td { border: 1px solid #ccc; padding: 2px 6px; text-align: center; }
.crasp-trace th.name { text-align: left; position: sticky; left: 0; background: #f4f4f4; }
.crasp-trace td.tok { font-weight: bold; background: #eef3fb; }
.crasp-trace td.t { background: #c8ebc8; } .crasp-trace td.f { color: #999; }
.crasp-trace td.n { background: #fff8e0; } .crasp-trace .verdict { font-weight: bold; }
"""


def traces(result: RunResult, checked: CheckedProgram) -> list[Trace]:
    """One :class:`Trace` per input of a run made with ``trace=True``."""
    out = []
    for index, tokens in enumerate(result.tokens):
        values = result.values_at(index)
        rows = [
            TraceRow(d.name, checked.sorts[d.name], format_expr(d.expr), tuple(values[d.name].tolist()))
            for d in checked.definitions
        ]
        n = len(tokens)
        if checked.accept is not None:
            assert result.accept_values is not None  # recorded by a run with trace=True
            accept = tuple(result.accept_values[index, :n].tolist())
            rows.append(TraceRow("accept", Sort.BOOL, format_expr(checked.accept), accept))
        else:
            assert result.next is not None  # a program without an accept output has next outputs
            for token, expr in checked.next_tokens:
                rows.append(TraceRow(f'next "{token}"', Sort.BOOL, format_expr(expr),
                                     tuple(result.next[token][index, :n].tolist())))
        verdict = None if result.accept is None else bool(result.accept[index])
        out.append(Trace(tokens, int(result.offsets[index]), tuple(rows), verdict))
    return out


def trace(program: Program | CheckedProgram, tokens: Tokens, *, offset: int = 0,
          allow_unknown: bool = False, alphabet: Sequence[str] = ()) -> Trace:
    """The trace of one input (arguments as for :func:`crasp.interpreter.run`)."""
    checked = program if isinstance(program, CheckedProgram) else check(program)
    result = run(checked, [tokens], offset=offset, trace=True, allow_unknown=allow_unknown,
                 alphabet=alphabet)
    return traces(result, checked)[0]


def html_page(items: Sequence[Trace], title: str = "C-RASP trace",
              labels: Sequence[str] | None = None) -> str:
    """A self-contained HTML page holding several traces, headed "Input N" or by ``labels``."""
    labels = labels or [f"Input {n}" for n in range(1, len(items) + 1)]
    sections = "".join(
        f"<h2>{html.escape(label)}: <code>{html.escape(' '.join(t.tokens[:40]))}"
        f"{' …' if len(t.tokens) > 40 else ''}</code></h2>{t.to_html()}"
        for label, t in zip(labels, items)
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>body {{ font-family: sans-serif; }} {_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>Booleans are shown as 1/0; hover over a name for its "
        f"definition.</p>{sections}</body></html>\n"
    )


def write_traces(items: Sequence[Trace], path: str | Path, title: str = "C-RASP trace",
                 labels: Sequence[str] | None = None) -> Path:
    """Write traces to ``path``: an HTML page for ``.html``/``.htm``, else a text file."""
    path = Path(path)
    if path.suffix.lower() in (".html", ".htm"):
        path.write_text(html_page(items, title, labels), encoding="utf-8")
    else:
        labels = labels or [f"input {n}" for n in range(1, len(items) + 1)]
        blocks = [f"# {label}\n{t.to_text()}" for label, t in zip(labels, items)]
        path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


__all__ = ["Trace", "TraceRow", "trace", "traces", "html_page", "write_traces"]
