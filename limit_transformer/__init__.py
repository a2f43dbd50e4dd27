"""Limit Transformers: compile C-RASP programs to exact torch models, check and translate them.

>>> from crasp import parse
>>> from limit_transformer import compile, run
>>> model = compile(parse('C = #"(" - #")"\\nA = C == 0'))
>>> run(model, ["( )", "( ( )"]).accept.tolist()
[True, False]
"""

from .compiler import CompileError, compile_program, model_summary
from .config import CompileConfig, ConfigError
from .model import LimitTransformer, ModelSpec
from .runner import run

compile = compile_program

__all__ = [
    "CompileConfig", "ConfigError", "CompileError", "LimitTransformer", "ModelSpec",
    "compile", "compile_program", "model_summary", "run",
]
