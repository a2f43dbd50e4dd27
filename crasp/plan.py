"""A checked program lowered to a flat list of instructions, and a pure-Python evaluator for it.

The numpy interpreter (:mod:`crasp.interpreter`) is the fastest on batches and long inputs, but
importing numpy costs more than running a short program on one input of ten thousand tokens. A
*plan* is what the command line keeps of a program it has checked before (see
:mod:`crasp.cache`): plain tuples of ints and strings, so it is stored with :mod:`marshal` and read
back without the parser, the AST classes or numpy. Evaluating a plan gives exactly what the
interpreter gives (counts are Python ints, so no input is too long for them).

An instruction is ``(op, *arguments)``; an argument that names another instruction is its index
(instructions only refer back). Each computes one value per position of the input:

=============  ===============================  ========================================
op             arguments                        value at position k (0-based)
=============  ===============================  ========================================
``token``      the token                        token k is it
``const``      an int                           the constant
``bool``       True or False                    the constant
``periodic``   modulus, residue spans           (offset + k + 1) mod modulus in the spans
``not``        a                                not a[k]
``and``/``or``  a, b                            a[k] and/or b[k]
``compare``    operator, a, b                   a[k] <op> b[k]
``count``      a                                a[0] + ... + a[k]
``window``     a, offset spans                  the a[j] with k - j in the spans, summed
``add``/``sub``  a, b                           a[k] +/- b[k]
``scale``      factor, a                        factor x a[k]
``min``/``max``  a, b                           min/max(a[k], b[k])
``if``         then, condition, otherwise       then[k] if condition[k] else otherwise[k]
=============  ===============================  ========================================

A plan is ``(alphabet, instructions, outputs)``: ``outputs`` is ``(index,)`` for an acceptance
program, or ``((token, index), ...)`` for a program of next-token outputs.

An acceptance program needs its output at the last position only, and so does every instruction
that feeds nothing but such last values: :func:`demand` marks the instructions needed at every
position, and :func:`evaluate` computes the others at the last position alone (a count of a token
there is ``tokens.count(token)``), which for ``#"a" > #"b"`` is two list counts instead of four
lists of n values.

>>> from crasp.checker import check
>>> from crasp.parser import parse
>>> plan = lower(check(parse('C = #"a" - #"b"\\nA = C == 0')))
>>> verdict(plan, "a b b a".split()), verdict(plan, ["a"])
('accept', 'reject')
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from itertools import accumulate, repeat
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the command line's fast path
if TYPE_CHECKING:
    from typing import Callable, Sequence

    from .checker import CheckedProgram

Plan = tuple
"""``(alphabet, instructions, outputs)`` as the module's text describes."""

FORMAT = 1
"""The layout of plans; a cached plan of another layout is not read."""

_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            ">=": operator.ge, ">": operator.gt}
_BINARY: dict[str, Callable[[int, int], int]] = {"and": operator.and_, "or": operator.or_, "add": operator.add,
                                                 "sub": operator.sub, "min": min, "max": max}


# ---------------------------------------------------------------- lowering


def lower(checked: CheckedProgram) -> Plan:
    """The plan of a checked program: the expressions its outputs depend on, each once."""
    from . import ast  # the lowering runs where the program was just checked; evaluation needs no AST

    instructions: list[tuple] = []
    seen: dict[tuple, int] = {}
    slots: dict[ast.Expr, int] = {}
    definitions = {d.name: d.expr for d in checked.definitions}

    def emit(instruction: tuple) -> int:
        if instruction not in seen:
            seen[instruction] = len(instructions)
            instructions.append(instruction)
        return seen[instruction]

    def slot(node: ast.Expr) -> int:
        # Iterative post-order, so that programs nested to the language's limit lower without recursion.
        stack = [(node, False)]
        while stack:
            current, ready = stack.pop()
            if current in slots:
                continue
            inputs = _inputs(current, definitions, ast)
            if not ready:
                stack.append((current, True))
                stack.extend((child, False) for child in inputs if child not in slots)
            elif isinstance(current, ast.Ref) and current.name in definitions:
                slots[current] = slots[inputs[0]]  # a definition is computed once, where it is defined
            else:
                slots[current] = emit(_instruction(current, checked, [slots[c] for c in inputs], ast))
        return slots[node]

    if checked.accept is not None:
        outputs: tuple = (slot(checked.accept),)
    else:
        outputs = tuple((token, slot(expr)) for token, expr in checked.next_tokens)
    return (tuple(sorted(checked.info.alphabet)), tuple(instructions), outputs)


def _inputs(node, definitions, ast) -> tuple:
    if isinstance(node, ast.Ref):
        return (definitions[node.name],) if node.name in definitions else ()
    if isinstance(node, ast.Count):
        return (node.operand,)
    return ast.children(node)


def _instruction(node, checked: CheckedProgram, args: list[int], ast) -> tuple:
    if isinstance(node, ast.TokenIs):
        return ("token", node.token)
    if isinstance(node, ast.BoolConst):
        return ("bool", node.value)
    if isinstance(node, ast.Const):
        return ("const", node.value)
    if isinstance(node, (ast.Periodic, ast.Ref)):  # a Ref here names a unary predicate
        modulus, residues = checked.periodic(node)
        return ("periodic", modulus, residues.spans)
    if isinstance(node, ast.Count):
        if node.guard is None:
            return ("count", args[0])
        return ("window", args[0], checked.guard_offsets(node.guard).spans)
    if isinstance(node, ast.Compare):
        return ("compare", node.op, *args)
    if isinstance(node, ast.Scale):
        return ("scale", node.factor, *args)
    if isinstance(node, ast.Cond):
        return ("if", *args)
    names = {ast.Not: "not", ast.And: "and", ast.Or: "or", ast.Add: "add", ast.Sub: "sub",
             ast.Min: "min", ast.Max: "max"}
    return (names[type(node)], *args)


# ---------------------------------------------------------------- evaluation


_SIMPLE = ("token", "const", "bool")
"""Instructions a last-position count reads without their values at every position."""


def _arguments(instruction: tuple) -> tuple:
    """The instruction indices an instruction reads."""
    op = instruction[0]
    if op in (*_SIMPLE, "periodic"):
        return ()
    if op == "window":
        return (instruction[1],)
    if op in ("compare", "scale"):  # an operator or a factor comes first
        return instruction[2:]
    return instruction[1:]


def is_acceptance(plan: Plan) -> bool:
    outputs = plan[2]
    return len(outputs) == 1 and isinstance(outputs[0], int)


def demand(plan: Plan) -> tuple[bool, ...]:
    """For each instruction, whether its value is needed at every position (else at the last only).

    >>> from crasp.checker import check
    >>> from crasp.parser import parse
    >>> demand(lower(check(parse('A = #"a" > #"b"'))))
    (False, False, False, False, False)
    >>> demand(lower(check(parse('V = #"(" < #")"\\nA = #V == 0'))))
    (False, True, True, True, True, True, False, False)
    """
    _, instructions, outputs = plan
    full = [False] * len(instructions)
    if not is_acceptance(plan):
        for _, index in outputs:
            full[index] = True
    for index in range(len(instructions) - 1, -1, -1):
        instruction = instructions[index]
        op = instruction[0]
        if op == "count":
            argument = instruction[1]
            if full[index] or instructions[argument][0] not in _SIMPLE:
                full[argument] = True
        elif op == "window" or full[index]:
            for argument in _arguments(instruction):
                full[argument] = True
    return tuple(full)


def evaluate(plan: Plan, tokens: Sequence[str], offset: int = 0, full: Sequence[bool] | None = None,
             counts: dict[str, int] | None = None) -> list:
    """Every instruction's values on one input: a list per instruction, or with ``full`` (see
    :func:`demand`) the value at the last position alone where ``full`` says so (non-empty inputs).
    ``counts``, where given, holds each token's number of occurrences in ``tokens`` (counted
    elsewhere, e.g. by numpy on a long input)."""
    _, instructions, _ = plan
    n = len(tokens)
    values: list = []
    for index, instruction in enumerate(instructions):
        if full is not None and not full[index]:
            values.append(_last(instruction, instructions, values, full, tokens, offset, counts))
            continue
        op = instruction[0]
        if op == "token":
            token = instruction[1]
            value = [t == token for t in tokens]
        elif op == "const" or op == "bool":
            value = [instruction[1]] * n
        elif op == "count":
            value = list(accumulate(values[instruction[1]]))
        elif op == "compare":
            value = list(map(_COMPARE[instruction[1]], values[instruction[2]], values[instruction[3]]))
        elif op == "not":
            value = [not x for x in values[instruction[1]]]
        elif op in _BINARY:
            value = list(map(_BINARY[op], values[instruction[1]], values[instruction[2]]))
        elif op == "scale":
            factor = instruction[1]
            value = [factor * x for x in values[instruction[2]]]
        elif op == "if":
            value = [x if c else y for x, c, y in
                     zip(values[instruction[1]], values[instruction[2]], values[instruction[3]])]
        elif op == "window":
            value = _window(values[instruction[1]], instruction[2], n)
        elif op == "periodic":
            value = _periodic(instruction[1], instruction[2], n, offset)
        else:
            raise ValueError(f"not a plan instruction: {instruction!r}")
        values.append(value)
    return values


def last_value(values: list, full: Sequence[bool] | None, index: int):
    """Instruction ``index``'s value at the last position, from :func:`evaluate`'s ``values``."""
    return values[index][-1] if full is None or full[index] else values[index]


def _last(instruction: tuple, instructions, values: list, full: Sequence[bool], tokens: Sequence[str], offset: int,
          counts: dict[str, int] | None):
    """An instruction's value at the last position, its arguments' values computed before."""
    n = len(tokens)
    op = instruction[0]

    def last(index: int):
        return last_value(values, full, index)

    if op == "token":
        return tokens[-1] == instruction[1]
    if op == "const" or op == "bool":
        return instruction[1]
    if op == "count":
        argument = instruction[1]
        if full[argument]:
            return sum(values[argument])
        read = instructions[argument]
        if read[0] != "token":
            return int(read[1]) * n
        return counts.get(read[1], 0) if counts is not None else tokens.count(read[1])
    if op == "compare":
        return _COMPARE[instruction[1]](last(instruction[2]), last(instruction[3]))
    if op == "not":
        return not last(instruction[1])
    if op in _BINARY:
        return _BINARY[op](last(instruction[1]), last(instruction[2]))
    if op == "scale":
        return instruction[1] * last(instruction[2])
    if op == "if":
        return last(instruction[1]) if last(instruction[2]) else last(instruction[3])
    if op == "window":
        column = values[instruction[1]]
        return sum(sum(column[max(n - stop, 0): n - start]) for start, stop in instruction[2] if start < n)
    if op == "periodic":
        return _periodic(instruction[1], instruction[2], 1, offset + n - 1)[0]
    raise ValueError(f"not a plan instruction: {instruction!r}")


def _window(values: list, spans, n: int) -> list[int]:
    """At k, the sum of values[j] over k - j in the spans (0 <= j <= k)."""
    prefix = [0, *accumulate(values)]
    total = [0] * n
    for start, stop in spans:
        start, stop = max(start, 0), min(stop, n)
        if start >= stop:
            continue
        if stop - start == 1:  # one offset: the values shifted right
            total[start:] = map(operator.add, total[start:], values[: n - start])
            continue
        # positions k >= start see prefix[k - start + 1] - prefix[max(k - stop + 1, 0)]
        high = prefix[1: n - start + 1]
        low = [*repeat(0, stop - start), *prefix[1: n - stop + 1]]
        total[start:] = map(operator.add, total[start:], map(operator.sub, high, low))
    return total


def _periodic(modulus: int, spans, n: int, offset: int) -> list[bool]:
    starts = [start for start, _ in spans]

    def inside(residue: int) -> bool:
        index = bisect_right(starts, residue) - 1
        return index >= 0 and residue < spans[index][1]

    first = offset + 1
    if modulus <= n:  # one test per residue, then a lookup per position
        table = [inside(r) for r in range(modulus)]
        return [table[p % modulus] for p in range(first, first + n)]
    return [inside(p % modulus) for p in range(first, first + n)]


def first_unknown(tokens: Sequence[str], known) -> int | None:
    """The index of the first token not in ``known`` (a set; a plan's alphabet is ``plan[0]``), or None."""
    if known.issuperset(tokens):
        return None
    return next(index for index, token in enumerate(tokens) if token not in known)


def verdict(plan: Plan, tokens: Sequence[str], offset: int = 0) -> str:
    """What ``crasp run`` prints for one input: ``accept``/``reject``, or per position the one
    token t whose next(t) holds (``?`` where none or several do)."""
    outputs = plan[2]
    if is_acceptance(plan):
        full = demand(plan)
        return "accept" if last_value(evaluate(plan, tokens, offset, full), full, outputs[0]) else "reject"
    values = evaluate(plan, tokens, offset)
    names = [token for token, _ in outputs]
    columns = [values[index] for _, index in outputs]
    chosen = []
    for k in range(len(tokens)):
        hits = [name for name, column in zip(names, columns) if column[k]]
        chosen.append(hits[0] if len(hits) == 1 else "?")
    return " ".join(chosen)
