"""Matrix products behind named functions: `matmul` (NumPy's matmul, broadcasting batch dims
included) and `addmm` (bias + a @ b in one output buffer).

Float32 products of NumPy arrays with two or more dims each run on the compiled layer's GEMM
(csrc/gemm.c's tiles on the thread team, csrc/matmul.c): it reads transposed and strided
operands in place (nn.Linear's x @ W^T and its backward's g @ W and g^T @ x), adds the bias
in the same pass over C, and each element of C is one fused multiply-add chain over k in
order, so its bits do not depend on the CPU's vector width or on the thread count.
Everything else runs the array module's matmul, which on NumPy is BLAS: other dtypes,
matrix-vector products (BLAS's gemv reads each operand once; the tiles would waste most of
their lanes), small products BLAS runs faster on the calling thread (csrc/matmul.c's
worth_it: never one it would share among threads of its own), CuPy arrays, and no build or
EMBER_KERNELS=numpy (the reference the kernel is tested against).
"""
import numpy as np

from . import array_module
from .cpu_kernels import compiled, note_fallback

# Multiply-adds up to which a product with B's rows in place is BLAS's, on the calling thread
# alone (csrc/matmul.c's worth_it: packing and the call cost more than the tiles save)
_BLAS_ALONE_UP_TO = 1 << 18


def _compiled(a, b, bias):
    """a @ b (+ bias) on the compiled GEMM, or None where it does not take them."""
    if compiled is None:
        note_fallback()
        return None
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    if b.strides[-1] == 4 and a.size * b.shape[-1] <= _BLAS_ALONE_UP_TO:
        return None   # (the kernel would decline it: this saves the call, 1 us a product)
    if (a.ndim > 2 or b.ndim > 2) and a.ndim > 1 and b.ndim > 1:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])   # (ValueError as NumPy's)
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
    return compiled.sgemm(a, b, bias)


def matmul(a, b):
    """a @ b, NumPy's matmul semantics."""
    out = _compiled(a, b, None)
    return array_module(a, b).matmul(a, b) if out is None else out


def addmm(bias, a, b):
    """bias + a @ b for matrices a and b, bias broadcasting to the product (added to it, one
    rounding per element)."""
    out = _compiled(a, b, bias)
    if out is None:
        out = array_module(a, b).matmul(a, b)
        out += bias
    return out
