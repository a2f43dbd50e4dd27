"""C-RASP[periodic, local]: parse, check, run and trace programs.

>>> import crasp
>>> program = crasp.parse('C = #"a" - #"b"\\nA = C == 0')
>>> crasp.run(program, ["a b", "a a b"]).accept.tolist()
[True, False]
"""

import importlib

# Names are imported on first use (PEP 562), so that ``crasp run`` loads only what it needs.
_HOMES = {
    "library": None, "Program": "ast", "CheckedProgram": "checker", "ProgramInfo": "checker",
    "Sort": "checker", "check": "checker", "RunResult": "interpreter", "accepts": "interpreter",
    "run": "interpreter", "parse": "parser", "parse_file": "parser", "DEFAULT_REGISTRY": "predicates",
    "PredicateRegistry": "predicates", "register_binary": "predicates", "register_unary": "predicates",
    "format_expr": "printer", "format_program": "printer",
    **dict.fromkeys(["CraspError", "CraspSyntaxError", "InputError", "NameResolutionError", "OutputError",
                     "PredicateError", "RegistryError", "SortError", "SourceError", "StaticError"], "errors"),
}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'crasp' has no attribute {name!r}")
    home = _HOMES[name]
    module = importlib.import_module(f".{home or name}", __name__)
    value = module if home is None else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


__all__ = [
    "library", "Program", "CheckedProgram", "ProgramInfo", "Sort", "check",
    "CraspError", "CraspSyntaxError", "InputError", "NameResolutionError", "OutputError",
    "PredicateError", "RegistryError", "SortError", "SourceError", "StaticError",
    "RunResult", "accepts", "run", "parse", "parse_file",
    "DEFAULT_REGISTRY", "PredicateRegistry", "register_binary", "register_unary",
    "format_expr", "format_program",
]
