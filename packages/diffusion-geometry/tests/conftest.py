"""Hypothesis profiles come from the repository's conftest."""
