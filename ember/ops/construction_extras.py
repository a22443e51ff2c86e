"""Constructors and small API pieces beyond the core table: tril/triu_indices, block_diag,
window functions, view_as_real/view_as_complex, the is_* queries, fill, and the torch-level
in-place aliases."""
import builtins
import math

import numpy as np

from .. import _dtype as dt
from .._creation import _C_NAMES, _finish, _is_int, _type_name
from .._data import check_fill
from .._device import placement
from .._tensor import Tensor
from ..backends import array_module
from ._elementwise import check_tensor, not_implemented
from .conversion import cast
from .filling import _fill, _fill_scalar
from .rounding import conj_physical
from .registry import METHODS, PUBLIC, defop, dispatch, export, make_inplace


def _int_arg(fname, value, arg, position):
    if not _is_int(value):
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be int, not "
                        f"{_type_name(value)}")
    return builtins.int(value.__index__())


# ---------------------------------------------------------------------- tril/triu_indices
def _triangle_indices(name, numpy_indices, row, col, offset, dtype, device):
    row = _int_arg(name, row, "row", 1)
    col = _int_arg(name, col, "col", 2)
    offset = _int_arg(name, offset, "offset", 3)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")  # (sic: PyTorch's spacing)
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = dt.int64 if dtype is None else dtype
    if dtype not in (dt.int32, dt.int64):
        raise not_implemented(name, dtype)
    rows, cols = numpy_indices(row, offset, col)
    return _finish(np.stack([rows, cols]).astype(dtype.np), dtype, placement(device), False)


@export(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None,
                 pin_memory=False):
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


@export(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None,
                 pin_memory=False):
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)


# ---------------------------------------------------------------------- block_diag
def _as_2d(shape):
    """PyTorch's block of a 0-d (1 x 1), 1-d (1 x n) or 2-d input."""
    return (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape


@defop("block_diag", node="BlockDiagBackward0", save=())
def _block_diag(*blocks, dtype):
    xp = array_module(*blocks)
    sizes = [_as_2d(b.shape) for b in blocks]
    out = xp.zeros((sum(r for r, _ in sizes), sum(c for _, c in sizes)), dtype=dtype)
    r0 = c0 = 0
    for b, (r, c) in zip(blocks, sizes):
        out[r0:r0 + r, c0:c0 + c] = b.reshape(r, c)
        r0, c0 = r0 + r, c0 + c
    return out


@_block_diag.defvjp
def _block_diag_vjp(ctx, g):
    grads = []
    r0 = c0 = 0
    for shape in ctx.in_meta[0]:
        r, c = _as_2d(shape)
        grads.append(g[r0:r0 + r, c0:c0 + c].reshape(shape))
        r0, c0 = r0 + r, c0 + c
    return tuple(grads)


@export(method=False)
def block_diag(*tensors):
    if not tensors:
        return _finish(np.empty((1, 0), dt.get_default_dtype().np), dt.get_default_dtype(),
                       placement("cpu"), False)   # (not a default-device factory)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    device = tensors[0]._device
    for i, t in enumerate(tensors):
        if t._device != device:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same "
                               f"device. Input 0 is on device {device} and input {i} is on "
                               f"device {t._device}")
        if t._data.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    dtype = dt.result_type_of(tensors)
    return dispatch(_block_diag, tensors, {"dtype": dtype.np}, dtype)


# ---------------------------------------------------------------------- window functions
# NOTE: PyTorch builds each window with a chain of tensor ops in the requested dtype
# (arange, mul_, cos_, ...), each rounding its result, and each Python scalar operand, to
# that dtype (float16/bfloat16 ops compute in float32 between the roundings). The same chain
# is replayed here, so the values are PyTorch's in every floating dtype (within an ulp of
# float32 where NumPy's cosine and PyTorch's vectorised one differ).
def _window_options(dtype, device):
    return (f"TensorOptions(dtype={_C_NAMES[dtype]}, device={device}, layout=Strided "
            "(default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))")


def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    """`values(k, r)`: the window of length len(k) from k = arange(len(k)) in the compute
    dtype, `r` rounding an intermediate or a scalar to the requested dtype."""
    n = _int_arg(name, window_length, "window_length", 1)
    if not isinstance(periodic, builtins.bool):
        raise TypeError(f"{name}(): argument 'periodic' (position 2) must be bool, not "
                        f"{_type_name(periodic)}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    device = placement(device)
    if dtype.category < 2:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_window_options(dtype, device)}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if n <= 1:
        return _finish(np.ones(n, dtype.np), dtype, device, requires_grad)
    if dtype.category == 3:
        raise not_implemented("arange_cpu", dtype)
    if dtype in (dt.float16, dt.bfloat16):
        def r(x):
            return np.asarray(x, np.float32).astype(dtype.np).astype(np.float32)
        compute = np.float32
    else:
        def r(x):
            return x  # (NumPy rounds Python scalars to the array's dtype itself)
        compute = dtype.np
    k = np.arange(n + 1 if periodic else n, dtype=compute)
    w = values(k, r)[:n]
    return _finish(w.astype(dtype.np), dtype, device, requires_grad)


def _cosine_window(alpha, beta):
    """alpha - beta cos(2 pi k / (N - 1)) (Hann: alpha = beta = 0.5)."""
    def values(k, r):
        w = r(np.cos(r(k * r(2 * math.pi / (len(k) - 1)))))
        return r(r(w * r(-beta)) + r(alpha))
    return values


@export(method=False)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_window(0.5, 0.5))


@export(method=False)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_window(alpha, beta))


def _blackman_values(k, r):
    w = r(k * r(math.pi / (len(k) - 1)))
    a = r(r(np.cos(r(w * r(4)))) * r(0.08))
    b = r(r(np.cos(r(w * r(2)))) * r(0.5))
    return r(r(a - b) + r(0.42))


@export(method=False)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman_values)


def _bartlett_values(k, r):
    w = r(k * r(2.0 / (len(k) - 1)))
    half = ((len(k) - 1) >> 1) + 1
    w[half:] = r(2 - w[half:])  # (PyTorch's mul_(-1).add_(2): the negation is exact)
    return w


@export(method=False)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett_values)


def _kaiser_values(beta):
    """I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2: one fused kernel in
    PyTorch, computing in float32 for float32 and below. The argument is computed so here;
    NumPy's I0 is float64 only (PyTorch's float32 I0 differs by an ulp or two)."""
    def values(k, r):
        a = k.dtype.type((len(k) - 1) / 2.0)
        x = beta * np.sqrt(np.abs(1 - ((k - a) / a) ** 2))
        return np.i0(x.astype(np.float64)) / np.i0(beta)
    return values


@export(method=False)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   _kaiser_values(beta))


# ---------------------------------------------------------------------- complex <-> real views
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
    if input.dtype.category != 3:
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


# ---------------------------------------------------------------------- queries
def _query(method):
    """Tensor.<name>() and torch.<name>(input), the latter checking its argument."""
    name = method.__name__

    def function(input):
        check_tensor(name, input)
        return method(input)
    function.__name__ = function.__qualname__ = name
    export(function, method=False)
    METHODS[name] = method
    return method


# NOTE: ember's conj() and neg() materialise their results, so no tensor carries PyTorch's
# lazy conjugate or negative bit.
@_query
def is_conj(self):
    return False


@_query
def is_neg(self):
    return False


# NOTE: ember's inference_mode only switches recording off; it does not mark the tensors
# made inside it, so none reads as an inference tensor (PyTorch's would answer True).
@_query
def is_inference(self):
    return False


@export(method=False)  # (Tensor.is_signed is a method of the class itself)
def is_signed(input):
    check_tensor("is_signed", input)
    return input.dtype.is_signed


@export(method=False)
def is_same_size(input, other):
    check_tensor("is_same_size", input)
    check_tensor("is_same_size", other, "other", 2)
    return input._data.shape == other._data.shape


def _is_same_size_method(self, other):
    check_tensor("is_same_size", other, "other", 1)
    return self._data.shape == other._data.shape


METHODS["is_same_size"] = _is_same_size_method


# ---------------------------------------------------------------------- fill
@export(method=False)
def fill(input, value):
    """A new tensor like `input` holding `value` (fill_'s out-of-place form)."""
    check_tensor("fill", input)
    if input.layout is not Tensor.layout:   # (PyTorch has no fill_ for sparse layouts)
        raise NotImplementedError(f"Could not run 'aten::fill_.Scalar' with arguments from the "
                                  f"'{input._data.backend}' backend")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return dispatch(_fill.renamed("FillBackward1"), (input, cast(value, input.dtype)))
    return dispatch(_fill_scalar.renamed("FillBackward0"), (input,),
                    {"value": check_fill(value, input.dtype, input._data.size)})


# ---------------------------------------------------------------------- in-place aliases
# torch.<op>_(input, ...) is Tensor.<op>_ wherever PyTorch has both.
_METHOD_ALIASES = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_",
    "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "index_put_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_",
    "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
    "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "addmv_")


def _method_alias(name):
    def alias(input, *args, **kwargs):
        check_tensor(name, input)
        return getattr(input, name)(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = name
    return alias


for _name in _METHOD_ALIASES:
    PUBLIC[_name] = _method_alias(_name)

METHODS["conj_physical_"] = make_inplace(conj_physical, "conj_physical_")
PUBLIC["conj_physical_"] = _method_alias("conj_physical_")


def _functional():
    from ..nn import functional  # (ember.nn imports after the op table)
    return functional


def celu_(input, alpha=1.0):
    check_tensor("celu_", input)
    return _functional().celu_(input, alpha)


def selu_(input):
    check_tensor("selu_", input)
    return _functional().selu_(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    check_tensor("rrelu_", input)
    if generator is not None:
        raise NotImplementedError("rrelu_(generator=...) is not supported by ember: it draws "
                                  "from the default generator (seed it with manual_seed)")
    return _functional().rrelu_(input, lower, upper, training)


def threshold_(input, threshold, value):
    check_tensor("threshold_", input)
    return _functional().threshold_(input, threshold, value)


def dropout_(input, p, train):
    check_tensor("dropout_", input)
    return _functional().dropout(input, p, train, inplace=True)


for _fn in (celu_, selu_, rrelu_, threshold_, dropout_):
    PUBLIC[_fn.__name__] = _fn
