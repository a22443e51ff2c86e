"""The op registry and every op family. Importing this registers all ops and binds the
Tensor methods they export."""
from .._tensor import Tensor
from . import registry
from . import (arithmetic, conversion, indexing, linalg, matmul, pointwise,  # noqa: F401
               random, reduction, shape, sorting, views)
from .registry import METHODS, OPS, PUBLIC  # noqa: F401


def _bind_methods():
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)


_bind_methods()
