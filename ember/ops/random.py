"""Random samplers: the in-place ones (uniform_, normal_, random_, exponential_, geometric_,
log_normal_, cauchy_, bernoulli_), bernoulli and multinomial. The factories built on them
(rand, randn, randint, randperm, normal) are in random_factories.py.

Every function draws from one `Generator` (the default one or `generator=`) and consumes its
stream as PyTorch 2.13's CPU kernels do, so seeded programs give PyTorch's numbers. Values are
produced on the host in the order PyTorch's kernel visits elements (memory order) and then
written into the tensor's storage.
"""
import math
import warnings

import numpy as np

from .. import _dtype as dt
from .. import _random_dist as rd
from .. import backends
from .._device import CPU, placement
from .._inplace import bump_version
from .._random import Generator, default_generator
from .._tensor import Tensor, _wrap, write_out
from ..backends.cpu_kernels import libm
from ..autograd.grad_mode import state
from ..cuda._random import generator as cuda_generator
from .registry import export

_F64 = np.float64


class _Checked:
    """A generator already resolved for the device its numbers go to: constructors draw on
    the host and then move, so the host sampler must not check it against the cpu."""
    __slots__ = ("generator",)

    def __init__(self, generator):
        self.generator = generator


def _gen(generator, device=CPU):
    """The generator drawing numbers for `device`: `generator`, or the device's default (the
    CPU one, or that of the CUDA device), with PyTorch's error for a mismatched device."""
    if generator is None:
        if device.type == "cpu":
            return default_generator
        return cuda_generator(device.index or 0)
    if type(generator) is _Checked:
        return generator.generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a Generator, but got {type(generator).__name__}")
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _for(generator, device):
    """`generator=` for a host sampler whose numbers end on `device` (None: the default
    device)."""
    device = placement(device)   # None: the default device
    if device.type == "cpu":
        return generator
    return _Checked(_gen(generator, device))


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{dt.type_name(dtype)}\'')


def _check_float(self, kernel):
    if self.dtype.category != dt.FLOATING:
        raise _not_implemented(kernel, self.dtype)


def _order_perm(array):
    """The axis order whose C order is `array`'s memory order (PyTorch's TensorIterator walks
    a nullary op's elements that way)."""
    if array.ndim < 2 or array.flags.c_contiguous:
        return tuple(range(array.ndim))
    return tuple(sorted(range(array.ndim), key=lambda d: -abs(array.strides[d])))


def _check_leaf(self):
    if state.enabled and self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _own_buffer(self, npt):
    """`self`'s array as a flat view a sampler may fill in place (a contiguous CPU tensor of
    NumPy dtype `npt`: the kernels then skip a temporary and a copy), else None."""
    data = self._data
    if self._device.type == "cpu" and data.dtype == npt and data.flags.c_contiguous and \
            data.flags.writeable:
        return data.reshape(-1)
    return None


def _fill(self, values_for):
    """`values_for(out)` written into `self`: `out` is `self`'s own array when a kernel may
    fill it in place (then nothing is copied), else None."""
    _check_leaf(self)
    out = _own_buffer(self, self.dtype.np)
    values = values_for(out)
    return _commit(self, None if values is out else values)


def _commit(self, values):
    """Write host `values` (in memory order) into `self`; the tail of every in-place sampler.
    `values` is None when the sampler wrote into `self`'s own array."""
    _check_leaf(self)
    if values is None:
        bump_version(self)
        return self
    data = self._data
    if values.dtype == _F64 and self.dtype in (dt.float16, dt.bfloat16):
        values = values.astype(np.float32)   # NOTE: PyTorch's double -> float -> half
    if self._device.type != "cpu":
        values = backends.to_device(
            self._device, np.ascontiguousarray(values).astype(self.dtype.np, copy=False))
        target = data
    else:
        target = data.transpose(_order_perm(data))
    target[...] = values.reshape(target.shape)
    bump_version(self)
    return self


def _is_contiguous(self):
    return self._data.flags.c_contiguous


# ---------------------------------------------------------------------- uniform / normal
def _uniform_values(gen, n, dtype, low, high, out=None):
    npt = dtype.np
    if npt == _F64:
        return gen.uniform(n, _F64, float(low), float(high) - float(low), out=out)
    # float16 / bfloat16 draw and compute in float32 (PyTorch's opmath), then round
    lo = np.float32(low)
    values = gen.uniform(n, np.float32, float(lo), float(np.float32(high) - lo),
                         out=out if npt == np.float32 else None)
    if npt != np.float32:
        # NOTE: a value that rounds up onto `high` becomes `low`, as PyTorch clamps it
        values = values.astype(npt)
        values[values == npt.type(high)] = npt.type(low)
    return values


def _real_parts(self):
    """A host tensor for a complex `self`'s real view: PyTorch's complex samplers fill the
    real and imaginary parts, interleaved in memory order, as a real tensor."""
    real = self.dtype.to_real()
    return _wrap(np.empty(2 * self._data.size, real.np), real, CPU)


def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    from_ = kwargs.pop("from", from_)
    if self.dtype.category == dt.COMPLEX:   # (PyTorch fills the real view, parts interleaved)
        parts = _real_parts(self)
        uniform_(parts, from_, to, generator=generator)
        return _commit(self, parts._data.view(self.dtype.np))
    _check_float(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(from_)} > to={_fmt(to)}")
    gen = _gen(generator, self._device)
    return _fill(self, lambda out: _uniform_values(gen, self._data.size, self.dtype, from_, to,
                                                   out))


def _normal_values(gen, self, mean, std, out=None):
    n = self._data.size
    npt = self.dtype.np
    if n >= 16 and _is_contiguous(self):
        # float16 / bfloat16 run the float32 kernel, then round
        if npt == _F64 or npt == np.float32:
            return gen.normal_fill(n, npt, mean, std, out=out)
        return gen.normal_fill(n, np.dtype(np.float32), mean, std, padded=True)
    return rd.affine(gen.normal_double(n), float(std), float(mean), _F64)


def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def normal_(self, mean=0, std=1, *, generator=None):
    _check_std(std)
    if self.dtype.category == dt.COMPLEX:   # (std / sqrt(2) each part, so |z| has the given spread)
        parts = _real_parts(self)
        normal_(parts, mean, std / math.sqrt(2), generator=generator)
        return _commit(self, parts._data.view(self.dtype.np))
    if not self._data.size:   # (PyTorch's kernel, and its dtype check, never run)
        return _commit(self, None)
    if self.dtype.category != dt.FLOATING:
        raise _not_implemented("normal_kernel_cpu", self.dtype)
    gen = _gen(generator, self._device)
    return _fill(self, lambda out: _normal_values(gen, self, mean, std, out))


# ---------------------------------------------------------------------- other samplers
def exponential_(self, lambd=1, *, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    if not self._data.size:   # (PyTorch's kernel, and its dtype check, never run)
        return _commit(self, None)
    if self.dtype.category != dt.FLOATING:
        raise RuntimeError("Exponential distribution is a continuous probability distribution."
                           f" dtype must be a floating point but you specified "
                           f"{dt.type_name(self.dtype)}")
    u = _gen(generator, self._device).uniform_double(self._data.size)
    return _commit(self, (-1.0 / lambd) * libm("log1p", -u))


def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    u = _gen(generator, self._device).uniform_double(self._data.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _commit(self, np.ceil(libm("log", u) / math.log1p(-p)))


def log_normal_(self, mean=1, std=2, *, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    if not self._data.size:   # (PyTorch's kernel, and its dtype check, never run)
        return _commit(self, None)
    _check_float(self, "log_normal_cpu")
    z = _gen(generator, self._device).normal_double(self._data.size)
    with np.errstate(over="ignore"):
        return _commit(self, libm("exp", rd.affine(z, float(std), float(mean), _F64)))


_C_TYPES = {dt.uint8: "unsigned char", dt.int8: "signed char", dt.int16: "short int",
            dt.int32: "int", dt.int64: "long int", dt.bool: "bool",
            dt.complex64: "c10::complex<float>", dt.complex128: "c10::complex<double>"}


def cauchy_(self, median=0, sigma=1, *, generator=None):
    if self.dtype.category != dt.FLOATING:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_C_TYPES[self.dtype]}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    u = _gen(generator, self._device).uniform_double(self._data.size)
    t = libm("tan", np.pi * (u - 0.5))
    return _commit(self, rd.affine(t, float(sigma), float(median), _F64))


def _bernoulli_scalar(self, p, generator):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    return _commit(self, _gen(generator, self._device).uniform_double(self._data.size) < p)


def _bernoulli_tensor(self, p, generator):
    if self._data.size == 0:
        return self
    # (PyTorch's kernel dispatches on self's dtype, then on p's: no complex self, no
    # integral p)
    if self.dtype.category == dt.COMPLEX:
        raise _not_implemented("bernoulli_tensor_cpu_self_", self.dtype)
    if p.dtype.category != dt.FLOATING:
        raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    pa = p._host()
    if pa.size and not ((pa >= 0) & (pa <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    try:
        pa = np.broadcast_to(pa, self._data.shape)
    except ValueError:
        raise RuntimeError(f"expand(torch.{dt.type_name(p.dtype)}Tensor{{{list(pa.shape)}}}, "
                           f"size={list(self._data.shape)}): the number of sizes provided "
                           f"({self._data.ndim}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({pa.ndim})") from None
    if self._device.type == "cpu":
        pa = pa.transpose(_order_perm(self._data))
    n = self._data.size
    gen = _gen(generator, self._device)
    if p.dtype is dt.float64:
        u = gen.uniform_double(n)
    else:
        u = gen.uniform(n, np.float32)
        pa = pa.astype(np.float32)
    return _commit(self, u < pa.reshape(-1))


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        return _bernoulli_tensor(self, p, generator)
    return _bernoulli_scalar(self, p, generator)


def dropout_mask_(noise, keep):
    """Dropout's mask: `noise.bernoulli_(keep).div_(keep)`, in one pass where the array
    allows it (CPU float32/float64 in memory order), with the same draws and bits."""
    a = noise._data
    if (noise._device.type != "cpu" or a.dtype not in (np.float32, np.float64)
            or not a.flags.c_contiguous):
        return noise.bernoulli_(keep).div_(keep)
    scale = a.dtype.type(1) / a.dtype.type(keep)   # (div_ rounds 1 / keep in the array's type)
    default_generator.bernoulli_scaled(a.reshape(-1), keep, float(scale))
    bump_version(noise)
    return noise


_INT_NAMES = {dt.uint8: "unsigned char", dt.int8: "signed char", dt.int16: "short",
              dt.int32: "int", dt.int64: "long", dt.bool: "bool"}
_FLOAT_DIGITS = {dt.float16: 11, dt.bfloat16: 8, dt.float32: 24, dt.float64: 53}


def _random_bounds(dtype):
    if dtype.category == dt.FLOATING:
        d = _FLOAT_DIGITS[dtype]
        return -(1 << d), 1 << d
    if dtype is dt.bool:
        return 0, 1
    info = np.iinfo(dtype.np)
    return int(info.min), int(info.max)


def _check_in_range(value, what, dtype):
    lo, hi = _random_bounds(dtype)
    if lo <= value <= hi:
        return
    if dtype.category == dt.FLOATING:
        name = {dt.float16: "half", dt.bfloat16: "bfloat16", dt.float32: "float",
                dt.float64: "double"}[dtype]
        d = _FLOAT_DIGITS[dtype]
        warnings.warn(f"{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision "
                      f"limitations {name} can support discrete uniform distribution only "
                      "within this range. This warning will become an error in version 1.7 "
                      "release, please fix the code in advance", UserWarning, stacklevel=4)
        return
    raise RuntimeError(f"{what} is out of bounds for {_INT_NAMES[dtype]}")


def random_(self, *args, generator=None, **kwargs):
    """random_(): the dtype's whole integer range; random_(to): [0, to);
    random_(from, to): [from, to); random_(from, None): [from, dtype's largest]."""
    if "from" in kwargs or "to" in kwargs:
        args = (kwargs.pop("from", 0), kwargs.pop("to", None))
    gen = _gen(generator, self._device)
    dtype = self.dtype
    n = self._data.size
    if dtype.category == dt.COMPLEX:
        raise _not_implemented("random_", dtype)
    if not args:
        if dtype is dt.bool:
            return _commit(self, (gen.random_uint32(n) & 1).astype(bool))
        if dtype in (dt.int64, dt.float64):
            mod = (1 << 63) if dtype is dt.int64 else (1 << 53) + 1
            return _commit(self, (gen.random_uint64(n) % np.uint64(mod)).astype(dtype.np))
        if dtype.category == dt.FLOATING:
            mod = (1 << _FLOAT_DIGITS[dtype]) + 1
        else:
            mod = int(np.iinfo(dtype.np).max) + 1
        return _commit(self, (gen.random_uint32(n) % np.uint32(mod)).astype(dtype.np))
    from_, to = (0, args[0]) if len(args) == 1 else args
    from_ = int(from_)
    if to is None:
        if dtype is dt.int64 and from_ == -(1 << 63):
            return _commit(self, gen.random_uint64(n).view(np.int64))
        _check_in_range(from_, "from", dtype)
        span = _random_bounds(dtype)[1] - from_ + 1
    else:
        to = int(to)
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={from_} >= to={to}")
        _check_in_range(from_, "from", dtype)
        _check_in_range(to - 1, "to - 1", dtype)
        span = to - from_
    # NOTE: PyTorch 2.13 takes a 64-bit draw from a range of 2**28 up (not 2**32)
    wide = span >= (1 << 28)
    words = gen.random_uint64(n) if wide else gen.random_uint32(n).astype(np.uint64)
    # NOTE: (word % span) + from in uint64, then reinterpreted as int64: PyTorch's wraparound
    values = ((words % np.uint64(span)) + np.uint64(from_ & 0xFFFFFFFFFFFFFFFF)).view(np.int64)
    return _commit(self, values.astype(dtype.np))


def _like(input, dtype):
    """An uninitialised host tensor shaped as `input` (the samplers then fill it)."""
    if input.layout is not Tensor.layout:   # (a sparse tensor has no elements to fill)
        raise NotImplementedError(f"Could not run the random samplers with arguments from the "
                                  f"'{input._data.backend}' backend: ember does not support "
                                  "random sampling into sparse tensors")
    dtype = dtype or input.dtype
    return _wrap(np.empty(input._data.shape, dtype=dtype.np), dtype)


# ---------------------------------------------------------------------- bernoulli / multinomial
@export(function=True, method=True)
def bernoulli(input, p=None, *, generator=None, out=None):
    if p is None:
        t = _like(input, None)
        if input._device.type != "cpu":
            t = _wrap(backends.to_device(input._device, t._data), t.dtype,
                      input._device)
        _bernoulli_tensor(t, input, generator)
    else:
        t = bernoulli_(_like(input, None), p, generator=_for(generator, input._device))
    return write_out(t, out) if out is not None else t


@export(function=True, method=True)
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input.dtype.category != dt.FLOATING:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{dt.type_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = input.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_cat > (1 << 24):
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _gen(generator, input._device)
    probs = input._host()
    rows = probs.reshape(-1, n_cat)
    if not replacement or num_samples == 1:
        with np.errstate(invalid="ignore"):
            ok = rows.size == 0 or (rows.max() < np.inf and rows.min() >= 0)
        if not ok:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1, dtype=np.float64 if input.dtype is dt.float64 else np.float32)
                == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = (-1.0 * libm("log1p", -gen.uniform_double(rows.size))).astype(probs.dtype)
        with np.errstate(divide="ignore"):
            keys = rows / q.reshape(rows.shape)
        if num_samples == 1:
            idx = np.argmax(keys, axis=1)[:, None]
        else:
            idx = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        idx = _multinomial_replacement(gen, rows, num_samples, input.dtype)
    idx = idx.astype(np.int64).reshape(probs.shape[:-1] + (num_samples,))
    t = _wrap(idx, dt.int64)
    if input._device.type != "cpu":
        t = _wrap(backends.to_device(input._device, idx), dt.int64, input._device)
    return write_out(t, out) if out is not None else t


def _multinomial_replacement(gen, rows, num_samples, dtype):
    acc = np.float64 if dtype is dt.float64 else np.float32
    rows = rows.astype(acc)
    if not (rows >= 0).all():                   # NaN fails here too, as in PyTorch
        raise RuntimeError("invalid multinomial distribution (encountering probability "
                           "entry < 0)")
    if not np.isfinite(rows).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability "
                           "entry = infinity or NaN)")
    cum = np.cumsum(rows, axis=1, dtype=acc)
    total = cum[:, -1:].copy()
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cum /= total
    cum[:, -1] = 1
    u = gen.uniform_double(rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
    cum64 = cum.astype(np.float64)
    return np.stack([np.searchsorted(cum64[i], u[i], side="left")
                     for i in range(rows.shape[0])]) if rows.shape[0] else \
        np.empty((0, num_samples), np.int64)


def _fmt(v):
    """A number as PyTorch prints it in these messages (1.5, 2, -1)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


# ---------------------------------------------------------------------- in-place methods
for _fn in (uniform_, normal_, random_, exponential_, geometric_, log_normal_, cauchy_,
            bernoulli_):
    export(_fn, function=False)
