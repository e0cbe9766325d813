"""Example organs: in-process Python modules that describe themselves (see docs/organs.md)."""
