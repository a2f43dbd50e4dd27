"""Limit Transformers: compile C-RASP programs to exact torch models, check and translate them.

Names are imported on first use, so that ``crasp`` commands that do not need torch start fast.

>>> from crasp import parse
>>> from limit_transformer import compile, run
>>> model = compile(parse('C = #"(" - #")"\\nA = C == 0'))
>>> run(model, ["( )", "( ( )"]).accept.tolist()
[True, False]
"""

from importlib import import_module

_EXPORTS = {
    "CompileConfig": "config", "ConfigError": "config",
    "CompileError": "compiler", "compile_program": "compiler",
    "LimitTransformer": "model", "ModelSpec": "model",
    "run": "runner",
    "check_properties": "properties", "Properties": "properties", "PropertyViolation": "properties",
    "to_ape": "ape", "positional_regularizer": "ape",
    "save": "export", "load": "export",
}

__all__ = [*_EXPORTS, "compile"]


def __getattr__(name: str):
    if name == "compile":
        return import_module(".compiler", __name__).compile_program
    if name in _EXPORTS:
        module = import_module(f".{_EXPORTS[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
