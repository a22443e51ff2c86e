"""Random tensor factories: rand/randn/randint (and their _like forms), randperm and the
normal overloads. Each makes a tensor and fills it with a sampler of ops/random.py, so it
draws exactly what PyTorch's factory draws."""
import builtins

import numpy as np

from .. import _dtype as dt
from .. import backends
from .._creation import _size_args, pinned
from .._device import placement
from .._tensor import Tensor, _wrap, write_out
from ._promote import broadcast_error
from .random import _check_std, _for, _gen, _like, normal_, random_, uniform_
from .registry import export


# ---------------------------------------------------------------------- factories
def _new(name, size, dtype, device, default=None):
    dtype = dtype or default or dt.get_default_dtype()
    shape = _size_args(name, size)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return _wrap(np.empty(shape, dtype=dtype.np), dtype)


def _finish(t, device, requires_grad, out, pin_memory=False):
    if pin_memory:
        t = pinned(t, pin_memory)
    device = placement(device)   # None: the default device
    if device is not None and device.type != "cpu":
        t = _wrap(backends.to_device(device, t._data), t.dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    if out is not None:
        return write_out(t, out)
    return t


def _size_from(size, kwargs):
    if "size" in kwargs:
        return (kwargs.pop("size"),)
    return size


@export(method=False)
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **kwargs):
    t = _new("rand", _size_from(size, kwargs), dtype, device)
    return _finish(uniform_(t, 0, 1, generator=_for(generator, device)), device,
                   requires_grad, out, pin_memory)


@export(method=False)
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **kwargs):
    t = _new("randn", _size_from(size, kwargs), dtype, device)
    return _finish(normal_(t, 0, 1, generator=_for(generator, device)), device,
                   requires_grad, out, pin_memory)


def _like_device(input, device):
    return device if device is not None else input._device


@export(method=False)
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    device = _like_device(input, device)
    t = uniform_(_like(input, dtype), 0, 1, generator=_for(generator, device))
    return _finish(t, device, requires_grad, None)


@export(method=False)
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    device = _like_device(input, device)
    t = normal_(_like(input, dtype), 0, 1, generator=_for(generator, device))
    return _finish(t, device, requires_grad, None)


def _randint_args(args, kwargs, fn):
    """(low, high, rest): randint(high, size) or randint(low, high, size)."""
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    args = list(args)
    if high is None:
        if not args:
            raise TypeError(f"{fn}() missing required argument 'high'")
        if low is None and len(args) >= 2 and not isinstance(args[1], (tuple, list)) or \
                (low is None and len(args) >= 3):
            low = args.pop(0)
        high = args.pop(0)
    return (0 if low is None else low), high, args


@export(method=False)
def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False, **kwargs):
    low, high, rest = _randint_args(args, kwargs, "randint")
    size = kwargs.pop("size", rest[0] if rest else None)
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    t = _new("randint", (size,), dtype, device, default=dt.int64)
    return _finish(random_(t, int(low), int(high), generator=_for(generator, device)),
                   device, requires_grad, out, pin_memory)


@export(method=False)
def randint_like(input, *args, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, **kwargs):
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    args = list(args)
    if high is None:
        high = args.pop() if args else None
        if high is None:
            raise TypeError("randint_like() missing required argument 'high'")
        if args:
            low = args.pop()
    if low is None and isinstance(high, Tensor) and (high._data.ndim or
                                                      high.device.type != "cpu"):
        # (PyTorch's overload with a tensor `high` reads it as a CPU scalar)
        raise RuntimeError("high must be a scalar tensor and on CPU")
    device = _like_device(input, device)
    t = random_(_like(input, dtype), int(low or 0), int(high),
                generator=_for(generator, device))
    return _finish(t, device, requires_grad, None)


@export(method=False)
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = dtype or dt.int64
    gen = _gen(generator, placement(device))   # None: the default device
    if n < 0xFFFFFFFF // 20:
        z = (gen.random_uint32(builtins.max(n - 1, 0)).astype(np.int64)
             % np.arange(n, 1, -1, dtype=np.int64))
        z += np.arange(z.size, dtype=np.int64)
    else:
        z = (gen.random_uint64(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
        z += np.arange(z.size, dtype=np.int64)
    perm = list(range(n))
    # NOTE: the swaps depend on one another (forward Fisher-Yates, as PyTorch's CPU randperm),
    # so this one loop is sequential; on Python ints it costs ~60 ns a step.
    for i, j in enumerate(z.tolist()):
        perm[i], perm[j] = perm[j], perm[i]
    t = _wrap(np.array(perm, dtype=dtype.np), dtype)
    return _finish(t, device, requires_grad, out)


# ---------------------------------------------------------------------- normal overloads
@export(method=False)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False, pin_memory=False):
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() missing required argument 'size'")
        _check_std(std)
        # NOTE: PyTorch's default-device mode leaves normal out of its factories: cpu
        device = "cpu" if device is None else device
        t = _new("normal", (size,), dtype, device)
        return _finish(normal_(t, mean, std, generator=_for(generator, device)), device,
                       requires_grad, out)
    if st:
        sa = std._host()
        if sa.size and not (sa >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(std)
    ref = mean if mt else std
    generator = _for(generator, ref._device)
    try:
        shape = np.broadcast_shapes(mean.shape if mt else (), std.shape if st else ())
    except ValueError:
        raise broadcast_error(mean.shape if mt else (), std.shape if st else ()) from None
    t = _wrap(np.empty(shape, dtype=ref.dtype.np), ref.dtype)
    # NOTE: PyTorch samples N(0, std) (or N(0, 1)), then scales and shifts in place in the
    # output's dtype: separate roundings, which we keep.
    if mt and not st:
        normal_(t, 0, std, generator=generator)
    else:
        normal_(t, 0, 1, generator=generator)
        _inplace_arith(t._data, std._host(), np.multiply)
    if mt:
        _inplace_arith(t._data, mean._host(), np.add)
    else:
        t._data += t._data.dtype.type(mean)
    r = _finish(t, ref._device, False, None)
    return write_out(r, out) if out is not None else r


def _inplace_arith(out, other, ufunc):
    common = np.result_type(out.dtype, other.dtype)
    if out.dtype.itemsize < 4 and out.dtype.kind == "f":
        common = np.result_type(common, np.float32)
    out[...] = ufunc(out, other, dtype=common)
