"""pointwise ops (being written)."""
