"""Trial records in other tools' formats: ATIF trajectories for Harbor (export/atif.py)."""
