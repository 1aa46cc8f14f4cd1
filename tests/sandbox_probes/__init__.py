"""Probe scripts run inside the sandbox by tests/match/test_sandbox.py (each prints JSON)."""
