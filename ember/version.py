"""ember.version (torch.version): what programs print and branch on."""
import os

from . import __version__  # noqa: F401
from . import backends

__all__ = ["__version__", "cuda", "hip", "xpu", "rocm", "debug", "git_version"]  # noqa: F822 (cuda comes from __getattr__)

# NOTE: `cuda` (below, computed on first use) is the CUDA runtime version of the installed
# CuPy ('12.8'), or None without CuPy, as on PyTorch's CPU build: programs test
# `torch.version.cuda is not None` to decide whether CUDA code paths exist.
hip = None
xpu = None
rocm = None
debug = False
git_version = "Unknown"


def _git_version():
    """The checkout's commit when ember runs from a git tree, else 'Unknown'."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = os.path.join(root, ".git", "HEAD")
    try:
        with open(head) as f:
            ref = f.read().strip()
        if ref.startswith("ref: "):
            with open(os.path.join(root, ".git", ref[5:])) as f:
                return f.read().strip()
        return ref
    except OSError:
        return "Unknown"


git_version = _git_version()


def _cuda_version():
    backend = backends.BACKENDS.get("cuda")
    if backend is not None:
        return backend.runtime_version
    try:
        import cupy   # (optional: cupy)
        version = cupy.cuda.runtime.runtimeGetVersion()
    except Exception:   # no CuPy, or no CUDA runtime library it can load
        return None
    return f"{version // 1000}.{version % 1000 // 10}"


def __getattr__(name):
    if name == "cuda":
        return _cuda_version()
    raise AttributeError(f"module 'ember.version' has no attribute '{name}'")
