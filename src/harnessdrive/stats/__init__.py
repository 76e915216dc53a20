"""Statistics over trial outcomes; nothing lives here yet."""
