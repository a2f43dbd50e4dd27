"""Runs as the harness keeps them: their specs and keys, the presets that plan them, the store, and
the sweeps and executors that train what the store lacks."""
