"""ember.func.vmap: run a function over a batch as if once per element, in one pass.

The inputs' mapped dims move to the front and become BatchedTensors of a new level; every op
the function calls then reaches the registry door, whose batching step runs the op's rule
from batching_rules.BATCHING_RULES on the whole batch; the outputs' batch dims move to
`out_dims`. Levels nest (vmap of vmap), and compose with grad, vjp and jacrev.
"""
import functools

from .. import _random
from .._tensor import Tensor
from ..ops.shape import cat, stack
from . import _pytree, _state
from .batched_tensor import LEVELS, BatchedTensor, make_batched, physical

_RANDOMNESS = ("error", "different", "same")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None)"""
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped


def _name(func):
    return getattr(func, "__name__", repr(func))


def _flat_in_dims(func, in_dims, args):
    prefix = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(prefix + "expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         "add inputs, or you are trying to vmap over a function with no "
                         "inputs. The latter is unsupported.")
    leaves, spec = _pytree.flatten(args)
    dims = _pytree.broadcast_prefix(in_dims, spec)
    if dims is None:
        raise ValueError(prefix + "in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_pytree.flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(prefix + f"Got in_dim={d} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if not isinstance(leaf, Tensor):
            raise ValueError(prefix + f"Got in_dim={d} for an input but the input is of type "
                             f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        n = leaf.dim()
        if not -n <= d < n:
            raise ValueError(prefix + f"Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
    return leaves, spec, dims


def _batch_size(leaves, dims):
    sizes = [leaf.shape[d] for leaf, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    leaves, spec, dims = _flat_in_dims(func, in_dims, args)
    size = _batch_size(leaves, dims)
    if chunk_size is not None and chunk_size < size:
        return _chunked(func, in_dims, out_dims, randomness, chunk_size, leaves, spec, dims,
                        size, kwargs)
    if randomness == "different":
        try:
            with _random_draws(_DrawnUnderVmap()):
                return _batched_call(func, out_dims, leaves, spec, dims, size, kwargs)
        except _DrawnUnderVmap:
            # NOTE: one batched pass would draw one set of numbers for the whole batch; each
            # element needs its own, so a function that draws runs once per element.
            return _per_element(func, out_dims, leaves, spec, dims, size, kwargs)
    if randomness == "error":
        with _random_draws(RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")):
            return _batched_call(func, out_dims, leaves, spec, dims, size, kwargs)
    return _batched_call(func, out_dims, leaves, spec, dims, size, kwargs)


def _batched_call(func, out_dims, leaves, spec, dims, size, kwargs):
    LEVELS.append([size])
    _state.depth += 1
    level = len(LEVELS)
    try:
        inputs = [leaf if d is None else make_batched(leaf.movedim(d, 0), level)
                  for leaf, d in zip(leaves, dims)]
        out = func(*_pytree.unflatten(spec, inputs), **kwargs)
        return _unbatch_outputs(func, out, out_dims, level)
    finally:
        LEVELS.pop()
        _state.depth -= 1


def _unbatch_outputs(func, out, out_dims, level):
    leaves, spec = _pytree.flatten(out)
    if not isinstance(out_dims, (int, tuple, list, dict)) and out_dims is not None or \
            isinstance(out_dims, bool):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be "
                         "an int, None or a python collection of ints representing where in "
                         "the outputs the vmapped dimension should appear.")
    dims = _pytree.broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         "is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {_pytree.flatten(out_dims)[1]} but outputs has structure "
                         f"{spec}.")
    results = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            if isinstance(leaf, BatchedTensor) and leaf._level == level:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None")
            results.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(leaf)}. Did you mean to set out_dims= "
                             "to None for output?")
        results.append(physical(leaf, level).movedim(0, d))
    return _pytree.unflatten(spec, results)


def _per_element(func, out_dims, leaves, spec, dims, size, kwargs):
    """randomness='different' for a function that draws: one call per batch element."""
    rows = []
    for b in range(size):
        inputs = [leaf if d is None else leaf.select(d, b) for leaf, d in zip(leaves, dims)]
        rows.append(func(*_pytree.unflatten(spec, inputs), **kwargs))
    return _join(rows, out_dims, stack)


def _chunked(func, in_dims, out_dims, randomness, chunk_size, leaves, spec, dims, size,
             kwargs):
    """chunk_size: the batch in pieces of `chunk_size` (less memory), results concatenated."""
    pieces = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        part = [leaf if d is None else leaf.narrow(d, start, n) for leaf, d in zip(leaves, dims)]
        pieces.append(_vmap_call(func, in_dims, out_dims, randomness, None,
                                 _pytree.unflatten(spec, part), kwargs))
    return _join(pieces, out_dims, cat)


def _join(results, out_dims, join):
    """The results of the pieces of one batch as one: each output leaf joined along its
    out_dim by `join` (stack for one row per batch entry, cat for chunks); an output without
    an out_dim is the first piece's."""
    flat = [_pytree.flatten(r)[0] for r in results]
    out_spec = _pytree.flatten(results[0])[1]
    merged = [join([f[k] for f in flat], d) if d is not None else flat[0][k]
              for k, d in enumerate(_pytree.broadcast_prefix(out_dims, out_spec))]
    return _pytree.unflatten(out_spec, merged)


class _DrawnUnderVmap(Exception):
    """A random draw inside a randomness='different' batched pass (caught by vmap)."""


class _random_draws:
    """While open, a draw from any CPU generator raises `error` (how vmap notices random ops:
    every random op draws through a Generator)."""

    def __init__(self, error):
        self.error = error

    def __enter__(self):
        self.saved = _random.Generator._engine
        error = self.error

        def refuse(generator):
            raise error
        _random.Generator._engine = refuse

    def __exit__(self, *exc):
        _random.Generator._engine = self.saved
        return False
