"""Complex tensors as real ones and back: view_as_real (a trailing axis of size 2 holding the
real and imaginary parts) and view_as_complex, views of the same memory whose gradients are
each other."""
import numpy as np

from .. import _dtype as dt
from ..backends import array_module
from .registry import check_tensor, defop, dispatch, export


_EMPTY = {}


@defop("view_as_real", node="ViewAsRealBackward0", save=(), view=True)
def _view_as_real(a):
    # NOTE: the new trailing axis of size 1 is the one the dtype view splits in two, so
    # any strides of `a` are allowed (a plain a.view(float) needs a contiguous last axis).
    return a[..., None].view(a.real.dtype)


@defop("view_as_complex", node="ViewAsComplexBackward0", save=(), view=True,
       conj_ready=True)
def _view_as_complex(a):
    return a.view(array_module(a).result_type(a.dtype, np.complex64))[..., 0]


@_view_as_real.defvjp
def _view_as_real_vjp(ctx, g):
    g = g.contiguous()  # (view_as_complex needs the pairs adjacent)
    return dispatch(_view_as_complex, (g,), _EMPTY, g.dtype.to_complex())


@_view_as_complex.defvjp
def _view_as_complex_vjp(ctx, g):
    return view_as_real(g)


@export(method=False)
def view_as_real(input):
    check_tensor("view_as_real", input)
    if input.dtype.category != dt.COMPLEX:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return dispatch(_view_as_real, (input,), _EMPTY, input.dtype.to_real())


@export(method=False)
def view_as_complex(input):
    check_tensor("view_as_complex", input)
    d = input.dtype
    if d not in (dt.float32, dt.float64):
        if d is dt.float16:
            raise RuntimeError("view_as_complex of a Half tensor gives ComplexHalf, which "
                               "ember lacks; convert to float32 first")
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {dt.type_name(d)}")
    shape, strides = input._data.shape, input.stride()
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return dispatch(_view_as_complex, (input,), _EMPTY, d.to_complex())
