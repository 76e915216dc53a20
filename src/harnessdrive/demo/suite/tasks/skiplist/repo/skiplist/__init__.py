"""Which files of a tree a skip list skips."""
