"""Improvement tasks: noise-aware acceptance, the round prompt, metrics (docs/improvement.md)."""
