"""ember.backends.mps (torch.backends.mps): Apple's Metal backend, which ember does not have."""

__all__ = ["is_available", "is_built", "is_macos13_or_newer"]


def is_available():
    return False


def is_built():
    return False


def is_macos13_or_newer(minor=0):
    return False
