"""What the playground computes: check, run, predict and compile, from plain data to plain data.

Each job takes the JSON object a request sent and returns a JSON-ready dict; a user's mistake is
a :class:`~crasp.errors.CraspError` (a program's errors carry line and column). Jobs read only
C-RASP program text, whitespace-separated tokens, regular expressions and the suite's task
names: nothing here imports or runs a user's Python. The server runs every job in a worker
process of its own (:mod:`tasks.playground.worker`), so a job may take as long as it likes here.

>>> check({"program": 'C = #"a" - #"b"\\nA = C == 0'})["ok"]
True
>>> found = check({"program": 'C = #"a"\\nA = D == 0'})["diagnostics"][0]
>>> found["line"], found["column"], found["message"]
(2, 5, "undefined name 'D'")
>>> run({"program": 'C = #"a" - #"b"\\nA = C == 0', "tokens": "a b a"})["outputs"]
['reject', 'accept', 'reject']
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from crasp.display import shown_positions
from crasp.errors import CraspError, SourceError

SOURCE = "program"
"""The name a program's errors carry (``program:2:5: ...``)."""

MAX_HEATMAP_TOKENS = 64
"""The longest input whose attention heatmaps are drawn (a heatmap has a row and a column per token)."""

PREDICT_SECONDS = 1.0
"""The searches' time of a prediction made here (the quick budget's other settings): a page waits for it."""


class RequestError(CraspError):
    """A request the playground cannot serve: a missing field, a name it will not load."""


def text_field(payload: dict, name: str, *, required: bool = True) -> str:
    """The string field ``name`` of a request (``""`` where optional and absent).

    >>> text_field({"program": 3}, "program")
    Traceback (most recent call last):
    tasks.playground.jobs.RequestError: 'program' must be a string, not int
    """
    value = payload.get(name)
    if value is None:
        if required:
            raise RequestError(f"the request has no {name!r}")
        return ""
    if not isinstance(value, str):
        raise RequestError(f"{name!r} must be a string, not {type(value).__name__}")
    return value


def offset_field(payload: dict) -> int:
    """The request's ``offset``: a whole number from 0 (default 0)."""
    value = payload.get("offset", 0)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**40:
        raise RequestError(f"'offset' must be a whole number from 0 to 2^40, not {value!r}")
    return value


def diagnostic(error: SourceError) -> dict:
    """A program's error as the editor marks it: where (1-based line and column, and where it
    ends), what, what was expected, and the whole message as the command line prints it."""
    loc = error.loc
    return {
        "line": loc.line if loc else None,
        "column": loc.column if loc else None,
        "end_line": loc.end_line if loc else None,
        "end_column": loc.end_column if loc else None,
        "kind": error.kind,
        "message": error.message,
        "expected": list(error.expected),
        "text": error.render(),
    }


def error_json(error: CraspError) -> dict:
    """``{"error": message}`` for any user error; a program's error adds its line and column."""
    if isinstance(error, SourceError):
        return {"error": error.render(kind=False), **{k: v for k, v in diagnostic(error).items() if k != "text"}}
    return {"error": str(error)}


def _checked(text: str):
    from crasp.checker import check as check_program
    from crasp.parser import parse

    return check_program(parse(text, SOURCE))


def check(payload: dict) -> dict:
    """The diagnostics of a program (``ok`` False) or its summary as ``crasp check`` gives it."""
    from crasp.cli import describe

    try:
        checked = _checked(text_field(payload, "program"))
    except SourceError as error:
        return {"ok": False, "diagnostics": [diagnostic(error)]}
    return {"ok": True, "diagnostics": [], "summary": describe(checked)}


def run(payload: dict) -> dict:
    """Run a program on one input with its trace: the tokens as run (a program that reads
    ``<bos>`` gets it prepended), the output at every position (``accept``/``reject`` for a
    recognizer, the next token for a token-producing program, ``?`` where no single one holds),
    the verdict, and every definition's value at every position. Of a long input the first and
    last :data:`MAX_TRACE_POSITIONS` halves are shown, ``null`` standing for the rest."""
    from crasp.interpreter import run as interpret
    from crasp.trace import traces

    checked = _checked(text_field(payload, "program"))
    tokens = known_tokens(payload, checked.info.alphabet)
    result = interpret(checked, [tokens], offset=offset_field(payload), trace=True, allow_unknown=True)
    trace = traces(result, checked)[0]
    if result.accept is not None:
        accept = next(row for row in trace.rows if row.name == "accept")
        outputs = ["accept" if value else "reject" for value in accept.values]
        verdict: str | None = "accept" if trace.verdict else "reject"
    else:
        outputs = _verdicts(result)
        verdict = None
    shown = shown_positions(len(trace.tokens), MAX_TRACE_POSITIONS)
    pick = lambda values: [None if k is None else values[k] for k in shown]  # noqa: E731
    return {
        "positions": [None if k is None else trace.offset + k + 1 for k in shown],
        "tokens": pick(trace.tokens),
        "length": len(trace.tokens),
        "offset": trace.offset,
        "kind": "accept" if result.accept is not None else "next",
        "verdict": verdict,
        "outputs": pick(outputs),
        "rows": [{"name": row.name, "sort": row.sort.name.lower(), "source": row.source,
                  "values": pick([int(v) for v in row.values])} for row in trace.rows],
    }


MAX_TRACE_POSITIONS = 400
"""The most positions a run's trace shows (half from each end)."""


def known_tokens(payload: dict, alphabet) -> list[str]:
    """The request's ``tokens`` split at whitespace; one the program never mentions is an error
    naming its position, unless the request's ``allow_unknown`` is true."""
    from crasp.errors import unknown_token
    from crasp.plan import first_unknown

    tokens = text_field(payload, "tokens", required=False).split()
    if payload.get("allow_unknown") is not True:
        position = first_unknown(tokens, frozenset(alphabet))
        if position is not None:
            raise unknown_token(0, tokens, position, sorted(alphabet), where=f"token {position + 1}",
                                allow="'allow unknown tokens'")
    return tokens


def task_named(payload: dict):
    """The task of a predict request: ``regex`` (with ``alphabet``) or ``task``, a suite task's
    name or ``re:ALPHABET:REGEX``. A ``module:attribute`` name is refused: it would import a module."""
    from tasks import registry
    from tasks.catalogue import registered

    expression = payload.get("regex")
    if expression is not None and expression != "":
        alphabet = text_field(payload, "alphabet").strip()
        if not alphabet:
            raise RequestError("a regular expression needs its alphabet, e.g. ab")
        return registry.get(f"re:{alphabet}:{text_field(payload, 'regex')}")
    name = text_field(payload, "task").strip()
    if not name:
        raise RequestError("give a regular expression and its alphabet, or a task's name")
    if ":" in name and not name.startswith("re:") and name not in registered():
        raise RequestError(f"task {name!r}: the playground takes the suite's task names and re:ALPHABET:REGEX; "
                           "module:attribute names would run Python (use `crasp predict` for your own tasks)")
    return registry.get(name)


def predict(payload: dict) -> dict:
    """Per positional scheme the verdict, its strength and a one-line reason, as ``crasp predict``
    shows them, on the quick budget with :data:`PREDICT_SECONDS` of search and no cache."""
    from tasks.findings import QUICK, SCHEME_TITLES
    from tasks.predict import predict as predict_task

    task = task_named(payload)
    budget = dataclasses.replace(QUICK, seconds=PREDICT_SECONDS)
    prediction = predict_task(task, budget=budget)
    schemes = [{"scheme": scheme, "title": SCHEME_TITLES[scheme], "verdict": verdict.verdict.value,
                "strength": verdict.strength.value if verdict.strength else None, "reason": verdict.brief,
                "basis": verdict.basis, "headline": verdict.headline}
               for scheme, verdict in prediction.schemes.items()]
    labels = prediction.labels
    return {"task": prediction.task, "family": prediction.family, "schemes": schemes,
            "labels": {"ape": labels.ape, "nope": labels.nope},
            "seconds": round(prediction.timing.seconds, 3) if prediction.timing else None}


def compile(payload: dict) -> dict:
    """Compile a program to a Limit Transformer; its description, PERIODIC and LOCAL read off its
    weights, its verdict on the input beside the interpreter's, and every attention head's
    pattern on the input as a heatmap (:mod:`tasks.playground.heatmaps`)."""
    from crasp.framing import frame, frames
    from crasp.interpreter import run as interpret
    from limit_transformer.compiler import compile_program
    from limit_transformer.config import CompileConfig
    from limit_transformer.plot import attention_patterns
    from limit_transformer.properties import check_properties
    from limit_transformer.runner import run as run_model

    from .heatmaps import heatmaps

    checked = _checked(text_field(payload, "program"))
    given = known_tokens(payload, checked.info.alphabet)
    tokens = list(frame(given)) if frames(checked.info.alphabet, raw=False) else given
    if not tokens:
        raise RequestError("give an input: the heatmaps show attention on it")
    if len(tokens) > MAX_HEATMAP_TOKENS:
        raise RequestError(f"the input has {len(tokens)} tokens; heatmaps are drawn for at most {MAX_HEATMAP_TOKENS}")
    offset = offset_field(payload)
    reference = interpret(checked, [tokens], offset=offset, raw=True, allow_unknown=True)
    model = compile_program(checked, CompileConfig(max_length=MAX_HEATMAP_TOKENS))
    compiled = run_model(model, [tokens], offset=offset, raw=True, allow_unknown=True)
    patterns = attention_patterns(model, tokens, offset)
    titles = {key: "uniform" if model.spec.heads[key[0]][key[1]].kind == "uniform"
              else f"offset {model.spec.heads[key[0]][key[1]].offset}" for key in patterns}
    return {
        "description": model.describe(),
        "summary": model.summary(),
        "properties": dataclasses.asdict(check_properties(model)),
        "tokens": tokens,
        "verdicts": {"interpreter": _verdicts(reference), "compiled": _verdicts(compiled)},
        "heatmaps": heatmaps(patterns, ["BOS", *tokens], titles),
    }


def _verdicts(result) -> list[str]:
    if result.accept is not None:
        return ["accept" if result.accept[0] else "reject"]
    return [token if token is not None else "?" for token in result.next_tokens(0)]


JOBS: dict[str, Callable[[dict], dict[str, Any]]] = {"check": check, "run": run, "predict": predict,
                                                      "compile": compile}
"""The jobs by the name the API gives them (``/api/<name>``)."""
