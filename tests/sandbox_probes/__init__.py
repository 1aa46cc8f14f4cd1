"""Probe scripts run inside the sandbox by tests/test_sandbox.py (each prints JSON)."""
