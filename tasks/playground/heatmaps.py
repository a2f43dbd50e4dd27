"""Attention heatmaps for the page: one per head, as a PNG drawn by matplotlib where it is
installed, and always as the weights themselves (the page draws an HTML table from them where
there is no picture).

>>> import numpy as np
>>> found = heatmaps({(0, 0): np.array([[1.0, 0.0], [0.5, 0.5]])}, ["BOS", "a"], {(0, 0): "uniform"},
...                  draw=False)
>>> found[0]["title"], found[0]["weights"], found[0]["image"]
('layer 0 head 0: uniform', [[1.0, 0.0], [0.5, 0.5]], None)
"""

from __future__ import annotations

import base64
import io
from typing import Mapping, Sequence

import numpy as np

DIGITS = 4
"""The weights are sent rounded to this many decimals."""


def drawable() -> bool:
    """Whether matplotlib is importable here (the ``plot`` extra)."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        return False
    return True


def heatmaps(patterns: Mapping[tuple[int, int], np.ndarray], labels: Sequence[str],
             titles: Mapping[tuple[int, int], str], *, draw: bool | None = None) -> list[dict]:
    """Per head, in (layer, head) order: its layer, head, title, the ``labels`` of its rows
    (queries) and columns (keys), the ``weights`` (query i's weight on key j) and ``image``, a
    ``data:image/png`` URL where ``draw`` (default: where matplotlib is installed), else None."""
    draw = drawable() if draw is None else draw
    found = []
    for (layer, head), weights in sorted(patterns.items()):
        title = f"layer {layer} head {head}: {titles[(layer, head)]}"
        found.append({"layer": layer, "head": head, "title": title, "labels": list(labels),
                      "weights": np.round(np.asarray(weights, dtype=float), DIGITS).tolist(),
                      "image": png(weights, labels, title) if draw else None})
    return found


def png(weights: np.ndarray, labels: Sequence[str], title: str) -> str:
    """One head's weights as a PNG, in a ``data:`` URL (matplotlib, without pyplot)."""
    from matplotlib.figure import Figure

    size = 1.6 + 0.22 * len(labels)
    figure = Figure(figsize=(size + 0.8, size))
    axis = figure.subplots()
    image = axis.imshow(weights, cmap="viridis", vmin=0, vmax=1)
    axis.set_title(title, fontsize=9)
    axis.set_xticks(range(len(labels)), labels, fontsize=7, rotation=90)
    axis.set_yticks(range(len(labels)), labels, fontsize=7)
    axis.set_xlabel("key j", fontsize=8)
    axis.set_ylabel("query i", fontsize=8)
    figure.colorbar(image, ax=axis, fraction=0.046, pad=0.04)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
