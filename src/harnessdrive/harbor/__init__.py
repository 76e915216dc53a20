"""Harbor task directories (schema 1.4): import as harnessdrive tasks, grade with their
verifier, and export suites back (docs/harbor.md)."""
