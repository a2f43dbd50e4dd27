"""Compact integer sets for messages and tables."""


def ranges(values) -> str:
    """Sorted values with runs of three or more shortened.

    >>> ranges([7, 1, 2, 3, 9, 10])
    '1..3,7,9,10'
    """
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return ",".join(str(a) if a == z else f"{a},{z}" if z == a + 1 else f"{a}..{z}" for a, z in runs)
