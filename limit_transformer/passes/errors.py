"""The error every compiler pass raises for a program it refuses.

Shared by the passes (size check, lowering) and re-exported by ``limit_transformer.compiler``.
"""

from crasp.errors import SourceError


class CompileError(SourceError):
    """A program the compiler refuses, located at the definition that cannot be made exact."""
