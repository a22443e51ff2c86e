"""Op-table entries for ops/complex.py (the parts of complex tensors)."""
import numpy as np

from . import OpInfo, unary_samples
from .rounding import COMPLEX_SHAPES, _fn


OPS = [
    OpInfo("angle", _fn("angle"), None, unary_samples(), dtypes=("int64", "float32",
                                                                 "float64")),
    OpInfo("angle_complex", _fn("angle"), np.angle, unary_samples(shapes=COMPLEX_SHAPES),
           dtypes=("complex64", "complex128"), grad=False),
    OpInfo("conj", _fn("conj"), np.conj, unary_samples(shapes=COMPLEX_SHAPES),
           dtypes=("float32", "complex64", "complex128"), grad=False),
    OpInfo("real", _fn("real"), np.real, unary_samples(shapes=COMPLEX_SHAPES),
           dtypes=("float32", "complex64", "complex128"), grad=False),
    OpInfo("imag", _fn("imag"), np.imag, unary_samples(shapes=COMPLEX_SHAPES),
           dtypes=("complex64", "complex128"), grad=False),
]
