"""ember.backends.cudnn (torch.backends.cudnn): the flags programs set. ember's CUDA path uses
no cuDNN (CuPy GEMM kernels), so the flags are stored and read back but change nothing;
`version()` is None and `is_available()` False, as on PyTorch's CPU build."""
import sys

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit", "flags"]


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


# The flags: plain module attributes, so `cudnn.benchmark = True` just works.
enabled = True
benchmark = False
benchmark_limit = None
deterministic = False
allow_tf32 = True


class flags:
    """Context manager that sets the flags and restores the previous ones on exit."""

    def __init__(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
                 allow_tf32=True):
        self.new = dict(enabled=enabled, benchmark=benchmark, deterministic=deterministic,
                        allow_tf32=allow_tf32)

    def __enter__(self):
        mod = sys.modules[__name__]
        self.old = {k: getattr(mod, k) for k in self.new}
        for k, v in self.new.items():
            setattr(mod, k, v)

    def __exit__(self, *exc):
        mod = sys.modules[__name__]
        for k, v in self.old.items():
            setattr(mod, k, v)
        return False

