"""The compiler's passes, one module each, in the order ``limit_transformer.compiler`` runs them.

============  ==============================================================================
module        pass
============  ==============================================================================
size          ``check_size``: refuse a program whose model exceeds the config's limits
lowering      ``lower``: CheckedProgram -> Lowered (slots, attention reads, MLP units)
dead_slots    ``eliminate_dead_slots``: Lowered -> Lowered, only what an output depends on
schedule      ``dependency_graph`` and ``allocate_layers``: Lowered -> DAG -> Schedule
weights       ``emit_weights``: Lowered, Schedule -> Weights (numpy arrays)
assemble      ``assemble``: Weights -> LimitTransformer (the torch module)
============  ==============================================================================

Shared types: ``lowered`` (the lowered form and the reserved tokens) and ``errors``
(``CompileError``). A pass imports only these and the passes before it; the package imports
nothing on its own, so using one pass does not load the others.
"""
