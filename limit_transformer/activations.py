"""The names of the MLP activations a compiled model uses (a module without torch, so that the
passes that only place operations into layers, :mod:`limit_transformer.depth`, import fast)."""

HEAVISIDE = "heaviside"
RELU = "relu"

__all__ = ["HEAVISIDE", "RELU"]
