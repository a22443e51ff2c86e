"""sorting ops (being written)."""
