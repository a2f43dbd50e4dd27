"""Passes 2 and 3, scheduling: the lowered operations placed into layers.

:func:`dependency_graph` takes a :class:`~limit_transformer.passes.lowered.Lowered` and gives a
networkx DAG with an edge from the operation writing a slot to each operation reading it;
:func:`allocate_layers` takes that graph and gives a :class:`Schedule`, every read in the
earliest attention sublayer and every MLP in the earliest MLP sublayer after all it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from .lowered import Lowered, Read


EMBEDDING = "embedding"


def dependency_graph(lowered: Lowered) -> nx.DiGraph:
    """Pass 2: a DAG with an edge from the operation writing a slot to every one reading it."""
    graph = nx.DiGraph()
    graph.add_node(EMBEDDING)
    writer: dict[int, int] = {}
    for index, operation in enumerate(lowered.operations):
        graph.add_edge(EMBEDDING, index)
        reads = (operation.source,) if isinstance(operation, Read) else tuple(
            s for unit in operation.units for s, _ in unit.inputs)
        for slot in reads:
            graph.add_edge(writer.get(slot, EMBEDDING), index)
        writes = (operation.target,) if isinstance(operation, Read) else tuple(
            s for unit in operation.units for s, _ in unit.outputs)
        for slot in writes:
            writer[slot] = index
    return graph


@dataclass(frozen=True)
class Schedule:
    """Pass 3's result: the layer of every operation (reads in attention, units in the MLP)."""

    layer: dict[int, int]
    n_layers: int


def allocate_layers(lowered: Lowered, graph: nx.DiGraph) -> Schedule:
    """Pass 3: each operation in the earliest sublayer after all it reads (longest path).

    Sublayer times: the embedding is 0, layer l's attention is 2l + 1 and its MLP 2l + 2.
    """
    time: dict[int | str, int] = {EMBEDDING: 0}  # operations by index, and the embedding
    for node in nx.topological_sort(graph):
        if node == EMBEDDING:
            continue
        earliest = max(time[p] for p in graph.predecessors(node)) + 1
        wants_odd = isinstance(lowered.operations[node], Read)
        if (earliest % 2 == 1) != wants_odd:
            earliest += 1
        time[node] = earliest
    layer = {node: (t - 1) // 2 for node, t in time.items() if isinstance(node, int)}
    return Schedule(layer, max(layer.values(), default=-1) + 1)
