"""Grader kinds: what runs on a built grading copy to judge it (``tests`` is built in)."""
