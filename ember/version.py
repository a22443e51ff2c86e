"""ember.version (torch.version): what programs print and branch on."""
from . import __version__  # noqa: F401

__all__ = ["__version__", "cuda", "hip", "xpu", "rocm", "debug", "git_version"]

# NOTE: None as on PyTorch's CPU build: programs test `torch.version.cuda is not None` to
# decide whether CUDA code paths exist. ember's CUDA support (CuPy) is an optional extra.
cuda = None
hip = None
xpu = None
rocm = None
debug = False
git_version = "Unknown"


def _git_version():
    """The checkout's commit when ember runs from a git tree, else 'Unknown'."""
    import os
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
