"""ember.backends.openmp (torch.backends.openmp)."""

__all__ = ["is_available"]


def is_available():
    """True: NumPy's BLAS runs a thread pool that ember.set_num_threads controls."""
    return True
