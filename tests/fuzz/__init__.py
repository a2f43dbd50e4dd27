"""Fuzzing of the parse -> check -> format -> interpret -> compile pipeline (see docs/fuzz.md)."""
