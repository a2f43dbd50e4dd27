"""C-RASP[periodic, local]: parse, check, run and trace programs.

>>> import crasp
>>> program = crasp.parse('C = #"a" - #"b"\\nA = C == 0')
>>> crasp.run(program, ["a b", "a a b"]).accept.tolist()
[True, False]
"""

from . import library
from .ast import Program
from .checker import CheckedProgram, ProgramInfo, Sort, check
from .errors import (
    CraspError,
    CraspSyntaxError,
    InputError,
    NameResolutionError,
    OutputError,
    PredicateError,
    RegistryError,
    SortError,
    SourceError,
    StaticError,
)
from .interpreter import RunResult, accepts, run
from .parser import parse, parse_file
from .predicates import DEFAULT_REGISTRY, PredicateRegistry, register_binary, register_unary
from .printer import format_expr, format_program

__all__ = [
    "library", "Program", "CheckedProgram", "ProgramInfo", "Sort", "check",
    "CraspError", "CraspSyntaxError", "InputError", "NameResolutionError", "OutputError",
    "PredicateError", "RegistryError", "SortError", "SourceError", "StaticError",
    "RunResult", "accepts", "run", "parse", "parse_file",
    "DEFAULT_REGISTRY", "PredicateRegistry", "register_binary", "register_unary",
    "format_expr", "format_program",
]
