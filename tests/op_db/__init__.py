"""The op table (like PyTorch's OpInfo): one entry per op drives the generic tests in
test_ops.py (forward vs NumPy, vs real torch, float64 gradcheck, gradgradcheck, dtypes,
in-place variants). Each family keeps its entries in its own module here."""
import importlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
ALL_NUMERIC = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64")


@dataclass
class Sample:
    """Inputs of one call: positional args (NumPy arrays become tensors) and kwargs."""
    args: tuple
    kwargs: dict = field(default_factory=dict)
    grad: tuple = None  # which positional args to differentiate (default: float arrays)


@dataclass
class OpInfo:
    name: str
    op: Callable                       # ember callable: op(ember, *args, **kwargs)
    ref: Optional[Callable] = None     # NumPy reference: ref(*arrays, **kwargs)
    samples: Callable = None           # samples(rng, dtype) -> list[Sample]
    dtypes: tuple = FLOATS
    torch_op: Optional[Callable] = None  # torch_op(torch, *args, **kwargs); default = op
    grad: bool = True                  # gradcheck in float64
    gradgrad: bool = True              # gradgradcheck in float64
    inplace: Optional[str] = None      # name of the Tensor in-place method, e.g. 'add_'
    atol: float = 1e-5
    rtol: float = 1.3e-6
    # NOTE: float64 gets its own, tight tolerances: 1e-5 cannot tell float64 arithmetic from
    # float32 arithmetic done behind the user's back. Loosen per op only with a reason.
    f64_atol: float = 1e-12
    f64_rtol: float = 1e-12
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    low_precision_tol: float = 1e-2    # float16 / bfloat16 tolerance
    nondeterministic_grad_points: bool = False

    def torch_call(self, torch, *args, **kwargs):
        fn = self.torch_op or self.op
        return fn(torch, *args, **kwargs)


FAMILIES = ("arithmetic", "pointwise", "reduction", "shape", "indexing", "sorting", "linalg",
            "views", "unary", "rounding", "complex", "comparison", "fft", "special", "nn")


def all_ops():
    """Every family's entries. A family that fails to import fails the collection: a
    silently skipped module would let its ops go untested."""
    ops = []
    for family in FAMILIES:
        ops.extend(importlib.import_module(f"op_db.{family}").OPS)
    return ops


# ---------------------------------------------------------------------- sample helpers
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4)]
BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)),
                   ((5,), ()), ((0, 3), (3,))]


def make_array(rng, shape, dtype, low=-3.0, high=3.0, noncontiguous=False):
    """A random array of `dtype` (ember dtype name) in [low, high)."""
    if noncontiguous and len(shape) >= 1:
        big = make_array(rng, tuple(shape[:-1]) + (shape[-1] * 2,), dtype, low, high)
        return big[..., ::2]
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype in ("uint8",):
        return rng.integers(max(0, int(low)), max(1, int(high)) + 1, shape).astype(np.uint8)
    if dtype.startswith("int"):
        return rng.integers(int(np.floor(low)), int(np.ceil(high)) + 1, shape).astype(dtype)
    if dtype == "bfloat16":
        import ml_dtypes
        return rng.uniform(low, high, shape).astype(ml_dtypes.bfloat16)
    if dtype.startswith("complex"):
        re = rng.uniform(low, high, shape)
        im = rng.uniform(low, high, shape)
        return (re + 1j * im).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def unary_samples(low=-3.0, high=3.0, shapes=SHAPES, **kwargs):
    def samples(rng, dtype):
        out = [Sample((make_array(rng, s, dtype, low, high),), dict(kwargs)) for s in shapes]
        out.append(Sample((make_array(rng, (3, 4), dtype, low, high, noncontiguous=True),),
                          dict(kwargs)))
        return out
    return samples


def binary_samples(low=-3.0, high=3.0, pairs=BROADCAST_PAIRS, scalar=None, **kwargs):
    def samples(rng, dtype):
        out = [Sample((make_array(rng, a, dtype, low, high), make_array(rng, b, dtype, low,
                                                                         high)), dict(kwargs))
               for a, b in pairs]
        out.append(Sample((make_array(rng, (3, 4), dtype, low, high, noncontiguous=True),
                           make_array(rng, (3, 4), dtype, low, high)), dict(kwargs)))
        if scalar is not None:
            out.append(Sample((make_array(rng, (3, 4), dtype, low, high), scalar),
                              dict(kwargs)))
        return out
    return samples
