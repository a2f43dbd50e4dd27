"""The toolkit's version, one constant: pyproject.toml reads it (``[tool.setuptools.dynamic]``),
and ``crasp --version`` prints it without asking the package metadata."""

VERSION = "0.1.0"
