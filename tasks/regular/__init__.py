"""Regular languages: regular expressions, minimal DFAs, an exact decider for C-RASP membership
(the NoPE class) with certificates, a DFA learner and accept-format tasks.

* :func:`from_regex`, :func:`from_table`, :func:`minimize`: canonical minimal complete DFAs;
* :func:`decide_nope`: C-RASP membership under end-of-sequence acceptance, the convention of
  ``tasks/data/regular_languages.csv`` (Yang et al. 2026, arXiv 2608.13433, Thm 15);
  :func:`decide_nope_last_position` for acceptance at the last position (partly unpublished);
* :func:`aperiodic`, :func:`algebraic_class`: the syntactic monoid's class;
* :func:`learn`: L* with a membership oracle; :func:`regex_task`, :func:`dfa_task`: tasks;
* :func:`program_for`: a plain C-RASP program for a language, where one is built.

See docs/regular.md.

>>> from tasks.regular import from_regex, decide_nope
>>> decide_nope(from_regex("(ab|ba)*", "ab")).member, decide_nope(from_regex("(ab|bba)*", "ab")).member
(True, False)
"""

from .data import LanguageRow, languages
from .decide import Decision, decide_nope, decide_nope_last_position
from .dfa import Dfa, from_regex, from_table, minimize, words
from .learn import Learned, learn
from .monoid import algebraic_class, aperiodic
from .regex import RegexError, parse_regex
from .task import dfa_task, regex_task


def program_for(dfa: Dfa, end: str | None = None):
    """A plain C-RASP program accepting the language of ``dfa`` at the last position (of
    ``<bos> w``, or with ``end`` of ``<bos> w end``), or None where none is built (see
    :mod:`tasks.regular.program`)."""
    from .program import program_for as build

    return build(dfa, end)


__all__ = ["Dfa", "Decision", "LanguageRow", "Learned", "RegexError", "aperiodic", "algebraic_class", "decide_nope",
           "decide_nope_last_position", "dfa_task", "from_regex", "from_table", "languages", "learn", "minimize",
           "parse_regex", "program_for", "regex_task", "words"]
