"""ember.backends.mkldnn (torch.backends.mkldnn): oneDNN flags. ember's CPU kernels are NumPy's,
so the flags are stored and read back but change nothing."""
import contextlib
import sys

__all__ = ["is_available", "enabled", "deterministic", "allow_tf32", "flags"]

enabled = True
deterministic = False
allow_tf32 = False


def is_available():
    """True, as on PyTorch's x86 CPU builds (programs branch on it to pick CPU paths)."""
    return True


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    mod = sys.modules[__name__]
    old = (mod.enabled, mod.deterministic)
    mod.enabled, mod.deterministic = enabled, deterministic
    try:
        yield
    finally:
        mod.enabled, mod.deterministic = old
