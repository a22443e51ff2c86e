"""ember.utils.hooks (torch.utils.hooks): RemovableHandle, the class every register_*hook of
ember returns (defined beside the autograd graph, which needs it first), and the marker for
hooks that are not serialized."""
from ..autograd.graph import RemovableHandle  # noqa: F401

__all__ = ["RemovableHandle", "unserializable_hook"]


def unserializable_hook(f):
    """Mark `f` as a hook that need not survive serialization (no warning for it)."""
    f.__torch_unserializable__ = True
    return f
