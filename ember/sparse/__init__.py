"""ember.sparse (torch.sparse): sparse COO and CSR tensors, their products, sums and softmax.

`ember.sparse_coo_tensor` / `Tensor.to_sparse()` make COO tensors, `ember.sparse_csr_tensor` /
`to_sparse_csr()` CSR matrices, and sparse_compressed_tensor / to_sparse_csc/bsr/bsc the other
compressed layouts (batched and hybrid too), which convert, densify and print.
"""
import functools

from . import conversion as _conversion
from . import methods as _methods
from . import pointwise as _pointwise
from .coo import SparseCooTensor, sparse_coo_tensor, spdiags  # noqa: F401
from .compressed import SparseCompressedTensor  # noqa: F401
from .constructors import (sparse_bsc_tensor, sparse_bsr_tensor,  # noqa: F401
                           sparse_compressed_tensor, sparse_csc_tensor, sparse_csr_tensor)
from .csr import SparseCsrTensor  # noqa: F401
from .ops import log_softmax, softmax, sum  # noqa: F401
from .products import addmm, mm, sampled_addmm, spsolve  # noqa: F401
from .gradcheck import as_sparse_gradcheck  # noqa: F401
from .legacy import (BFloat16Tensor, ByteTensor, CharTensor, DoubleTensor,  # noqa: F401
                     FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)

__all__ = ["addmm", "as_sparse_gradcheck", "check_sparse_tensor_invariants", "log_softmax",
           "mm", "sampled_addmm", "softmax", "spdiags", "spsolve", "sum"]

_conversion.install_dense_methods()
_methods.install_sparse_methods()
_pointwise.install_pointwise_methods()


class check_sparse_tensor_invariants:
    """torch.sparse.check_sparse_tensor_invariants: ember checks a sparse tensor's coordinates
    against its size on every construction, so enabling or disabling the checks changes
    nothing; the context manager, decorator and queries are accepted for compatibility."""

    _enabled = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        self.saved_state = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved_state

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper
