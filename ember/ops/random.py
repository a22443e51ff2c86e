"""random ops (being written)."""
