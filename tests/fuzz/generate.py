"""Random argument lists for the differential fuzzer, most of them invalid on purpose.

A generated call is a plain Python structure in which `T` stands for a tensor (a NumPy array,
its dtype name and whether it requires grad) and `D` for a dtype; `build` turns the same
structure into torch's or ember's objects, so both libraries see the same values."""
import inspect
from dataclasses import dataclass

import numpy as np

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128")
# NOTE: shapes stay tiny: a random size or repeat count multiplies them, and no op may be
# able to allocate more than a few MB from what the generator draws.
SHAPES = ((), (), (0,), (1,), (3,), (4,), (2, 3), (3, 1), (1, 3), (3, 3), (2, 3, 4), (0, 3),
          (2, 1, 3), (1, 1, 1, 2))
NP_SCALARS = (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
              np.float32, np.float64, np.complex64, np.complex128)
REDUCTIONS = ("mean", "sum", "none", "bogus")


@dataclass
class T:
    """A tensor to be: its values, dtype name and requires_grad."""
    array: np.ndarray
    dtype: str
    requires_grad: bool = False

    def __repr__(self):
        return (f"T({self.dtype}{list(self.array.shape)}"
                f"{', grad' if self.requires_grad else ''})")


@dataclass
class D:
    """A dtype to be, by name."""
    name: str

    def __repr__(self):
        return f"D({self.name})"


def build(lib, value):
    """`value` with every T and D made into `lib`'s tensors and dtypes (fresh copies)."""
    if isinstance(value, T):
        return _tensor(lib, value)
    if isinstance(value, D):
        return getattr(lib, value.name)
    if isinstance(value, list):
        return [build(lib, v) for v in value]
    if isinstance(value, tuple):
        return tuple(build(lib, v) for v in value)
    if isinstance(value, dict):
        return {k: build(lib, v) for k, v in value.items()}
    return value


def _tensor(lib, t):
    if t.dtype == "bfloat16":
        out = lib.tensor(t.array.astype(np.float32)).to(lib.bfloat16)
    else:
        out = lib.tensor(t.array.copy())
    if t.requires_grad:
        out.requires_grad_(True)
    return out


def random_array(rng, shape, dtype):
    """Values small enough for every dtype, with NaN and inf now and then in floats."""
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint8":
        return rng.integers(0, 10, shape).astype(np.uint8)
    if dtype.startswith("int"):
        return rng.integers(-5, 10, shape).astype(dtype)
    base = np.round(rng.uniform(-4, 4, shape), 3)
    if base.size and rng.random() < 0.1:
        base.flat[rng.integers(base.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
    if dtype.startswith("complex"):
        return (base + 1j * np.round(rng.uniform(-4, 4, shape), 3)).astype(dtype)
    return base.astype("float32" if dtype == "bfloat16" else dtype)


def random_tensor(rng, shape=None, dtype=None):
    if shape is None:
        shape = SHAPES[rng.integers(len(SHAPES))]
    if dtype is None:
        # Floats more often than the rest: most ops are defined on them.
        dtype = ("float32", "float64")[rng.integers(2)] if rng.random() < 0.4 else \
            DTYPES[rng.integers(len(DTYPES))]
    grad = dtype.startswith(("float", "complex")) and rng.random() < 0.1
    return T(random_array(rng, shape, dtype), dtype, bool(grad))


def random_scalar(rng):
    kind = rng.integers(6)
    if kind == 0:
        return int(rng.integers(-4, 6))
    if kind == 1:
        return float(np.round(rng.uniform(-3, 3), 2))
    if kind == 2:
        return bool(rng.random() < 0.5)
    if kind == 3:
        return complex(1.5, -0.5)
    cls = NP_SCALARS[rng.integers(len(NP_SCALARS))]
    return cls(rng.integers(0, 4))


def random_dim(rng):
    return int(rng.integers(-4, 4))


def random_size(rng):
    n = int(rng.integers(0, 4))
    dims = [int(rng.integers(-2, 5)) for _ in range(n)]
    return dims if rng.random() < 0.3 else tuple(dims)


def random_any(rng):
    """Anything an argument could be, invalid kinds included."""
    kind = rng.integers(12)
    if kind < 4:
        return random_tensor(rng)
    if kind < 6:
        return random_scalar(rng)
    if kind == 6:
        return random_dim(rng)
    if kind == 7:
        return random_size(rng)
    if kind == 8:
        return None
    if kind == 9:
        return [random_tensor(rng) for _ in range(int(rng.integers(0, 3)))]
    if kind == 10:
        return D(DTYPES[rng.integers(len(DTYPES))])
    return str(REDUCTIONS[rng.integers(len(REDUCTIONS))])


# Parameter names -> the kind of value a valid call passes there (the rest: random_any).
_TENSOR_NAMES = {"input", "other", "self", "tensor", "x", "x1", "x2", "y", "weight", "bias",
                 "target", "mat", "mat1", "mat2", "vec", "vec1", "vec2", "batch1", "batch2",
                 "end", "exponent", "mask", "index", "src", "source", "values", "A", "B",
                 "tensor1", "tensor2", "condition", "elements", "test_elements", "boundaries",
                 "sorted_sequence", "log_input", "anchor", "positive", "negative"}
_DIM_NAMES = {"dim", "dim0", "dim1", "axis", "start_dim", "end_dim", "dim2", "source_dim"}
_SIZE_NAMES = {"size", "shape", "sizes", "dims", "output_size", "kernel_size", "stride",
               "padding", "pad", "repeats", "split_size_or_sections", "indices"}
_SCALAR_NAMES = {"alpha", "beta", "value", "p", "min", "max", "eps", "lambd", "scale",
                 "threshold", "negative_slope", "margin", "ord", "diagonal", "offset", "n",
                 "k", "step", "start", "decimals", "correction", "q", "approximate"}


def value_for(rng, name):
    """A value for a parameter called `name`: the expected kind mostly, anything else often."""
    if rng.random() < 0.25:
        return random_any(rng)
    if name in _TENSOR_NAMES:
        return random_tensor(rng)
    if name in _DIM_NAMES:
        return random_dim(rng)
    if name in _SIZE_NAMES:
        return random_size(rng)
    if name in _SCALAR_NAMES:
        return random_scalar(rng)
    if name == "dtype":
        return D(DTYPES[rng.integers(len(DTYPES))])
    if name in ("keepdim", "unbiased", "largest", "sorted", "inplace", "training",
                "descending", "stable", "right", "return_inverse", "return_counts"):
        return bool(rng.random() < 0.5)
    if name == "reduction":
        return str(REDUCTIONS[rng.integers(len(REDUCTIONS))])
    return random_any(rng)


def signature_call(rng, fn):
    """(args, kwargs) for ember's `fn`, drawn from its signature's parameter names."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    args, kwargs = [], {}
    for p in params:
        if p.name in ("out", "generator", "device", "layout", "pin_memory", "memory_format"):
            continue  # other axes: out= and devices have their own tests
        required = p.default is inspect.Parameter.empty
        if p.kind is p.VAR_POSITIONAL:
            name = p.name.rstrip("s") if p.name != "size" else "size"
            args.extend(value_for(rng, "dim" if name == "size" else "tensor")
                        for _ in range(int(rng.integers(0, 4))))
        elif p.kind is p.VAR_KEYWORD:
            continue
        elif p.kind is p.KEYWORD_ONLY:
            if not required and rng.random() > 0.3:
                continue
            kwargs[p.name] = value_for(rng, p.name)
        elif required or rng.random() < 0.3:
            if not required and len(args) < params.index(p):
                kwargs[p.name] = value_for(rng, p.name)
            else:
                args.append(value_for(rng, p.name))
    if not params or rng.random() < 0.05:
        args.append(random_any(rng))   # a wrong arity now and then
    return args, kwargs


def mutate_sample(rng, args, kwargs):
    """An op-table sample with some arguments swapped for random (often invalid) ones."""
    args = [T(a, a.dtype.name) if isinstance(a, np.ndarray) else a for a in args]
    kwargs = dict(kwargs)
    roll = rng.random()
    if roll < 0.3 or not args:
        return args, kwargs               # the sample itself, valid
    for _ in range(int(rng.integers(1, 3))):
        i = int(rng.integers(len(args)))
        old = args[i]
        if isinstance(old, T) and rng.random() < 0.5:
            # same values, another dtype or a transposed/squeezed shape
            if rng.random() < 0.5:
                dtype = DTYPES[rng.integers(len(DTYPES))]
                args[i] = T(random_array(rng, old.array.shape, dtype), dtype)
            else:
                args[i] = random_tensor(rng, dtype=old.dtype)
        else:
            args[i] = random_any(rng)
    if kwargs and rng.random() < 0.3:
        key = list(kwargs)[rng.integers(len(kwargs))]
        kwargs[key] = random_any(rng)
    return args, kwargs
