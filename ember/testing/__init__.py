"""ember.testing (torch.testing): assert_close with PyTorch's default tolerances and failure
messages, the deprecated assert_allclose, and make_tensor."""
from ._comparison import assert_allclose, assert_close  # noqa: F401
from ._creation import make_tensor  # noqa: F401

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
