"""Conformance tests against the real client tools (see conftest.py)."""
