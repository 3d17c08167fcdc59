"""Puts the project root on sys.path so tests import `components`, `tools` and `policies` as the program does."""
