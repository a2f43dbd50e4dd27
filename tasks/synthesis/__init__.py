"""Program synthesis: find a C-RASP program for a task from its reference.

:func:`synthesize` enumerates expressions bottom-up by size (the number of AST nodes, a local
guard counting as one more), over the two sorts of the language: Boolean vectors and count vectors.
Candidates are evaluated many at a time, as numpy arrays over candidates x positions of a batch
of inputs (all inputs concatenated, so counts are prefix sums within each input), with the
interpreter's semantics: positions from 1, ``<bos>`` an ordinary token, inclusive counts, periodic
predicates reading the absolute position offset + k. Candidates with the same values on the batch
are one class (*observational equivalence*): only the first, smallest, of a class is kept and
combined further, so the search grows by classes rather than by expressions.

Each output of the task is searched for at once over the same enumeration: the ``accept`` Boolean
(true exactly where the verdict is, at the last position), or for each output token t the
Boolean next(t) (true at the checked positions whose target is t, or that have t among their
legal next symbols; every other position is free). When every output has a match on the batch,
the program is assembled (shared sub-expressions become definitions), checked by
:func:`crasp.checker.check` and verified by :func:`tasks.verify.verify`; a counterexample joins the
batch and the search starts again. Constants, multipliers, periods and local offsets come from
small ranges that later *rounds* of the search widen. Only a program that passed the verifier is
returned. Besides the plain leaves, the enumeration starts from *atoms* (:mod:`.atoms`), whole
expressions taken as leaves: the counts of a seq2seq format, the outputs already found, and the
relations between the input's symbol counts and blocks (``#a == #b``, a*b*c*) that bear on an
output still open, so that a choice among classes by comparing counts, or a counter language such
as a^n b^n c^n, is a small combination of them.

The package is split by concern: :mod:`.config` (what is searched, what is returned),
:mod:`.examples` (the inputs and the outputs to find), :mod:`.evaluator` (the batch's vectorised
semantics), :mod:`.search` (the enumeration), :mod:`.assembly` (programs from derivations) and
:mod:`.loop` (rounds, verification, counterexamples).

>>> import tasks
>>> from tasks.synthesis import SynthesisConfig, synthesize
>>> result = synthesize(tasks.get("tomita_1"), SynthesisConfig(time_limit=20))
>>> print(result.text, end="")
alphabet {"<bos>"}
B1 = #"0" == 0
next "0" = false
next "1" = B1
next "<eos>" = B1
>>> result.size
7
"""

from .assembly import expr_size, program_size
from .config import SynthesisConfig, SynthesisError, SynthesisResult
from .loop import synthesize

__all__ = ["SynthesisConfig", "SynthesisResult", "SynthesisError", "synthesize", "program_size", "expr_size"]
