"""Imported once by the worker processes' parent (multiprocessing's forkserver, see
:mod:`tasks.playground.worker`), never by anything else: its import parses a correct and a
broken program, so that the parser's tables and Lark's parser (built on a program's first error)
are in memory before any job is forked, and no job reads them from disk again.

This is the one module of the playground that works on import: a forkserver runs nothing else.
"""

from crasp.errors import CraspSyntaxError
from crasp.parser import parse

parse('A = #"a" > 0')
try:
    parse("A = ")
except CraspSyntaxError:
    pass
