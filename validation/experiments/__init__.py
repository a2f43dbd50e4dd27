"""Experiments built on the harness: the arithmetic papers' central claims, the depth and
training-length experiments, and the demo."""
