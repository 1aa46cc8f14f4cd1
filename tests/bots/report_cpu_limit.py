"""Crashes at its first move, naming its CPU-time limit (RLIMIT_CPU) in the traceback."""

import resource


def play(observation):  # type: ignore[no-untyped-def]
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    raise RuntimeError(f"cpu limit {soft} {hard}")
