"""Finding repeated keys."""
