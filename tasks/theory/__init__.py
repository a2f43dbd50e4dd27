"""A kit for testing the theory: Hypothesis strategies for every object of the theory, and the
papers' statements as executable properties (``crasp theory``, ``pytest --pyargs tasks.theory``).
"""
