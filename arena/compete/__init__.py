"""Competing: tournament formats and schedules, the local runner (a whole tournament in a
process pool, no broker, no database), ratings on the Elo scale with intervals, and the
sequential regression test (SPRT).

May import :mod:`arena.match`, :mod:`arena.engine`, numpy and scipy; never a database, a
broker or a web or CLI framework (docs/architecture.md; tests/test_layering.py).
"""
