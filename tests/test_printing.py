"""repr/str of tensors against real PyTorch, character for character (module name aside)."""
import numpy as np
import pytest

import ember
from ember._printing import get_printoptions, printoptions
from ember._tensor import _wrap

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]

SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0,), (0, 3), (2, 0, 3), (7, 13),
          (3, 40), (1001,), (40, 30), (12, 10, 10), (5, 5, 5, 9), (2, 7, 1, 80)]


def _float_values(kind, shape, rng):
    n = int(np.prod(shape))
    if kind == "normal":
        return rng.standard_normal(n)
    if kind == "scaled":  # one magnitude per tensor, from 1e-10 to 1e10
        return rng.standard_normal(n) * 10.0 ** rng.uniform(-10, 10)
    if kind == "magnitudes":  # magnitudes spread over 1e-10..1e10 inside one tensor
        return rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-10, 10, n)
    if kind == "integral":
        return rng.integers(-1000, 1000, n).astype(np.float64)
    if kind == "big_integral":
        return rng.integers(-5, 5, n) * 1e9
    if kind == "positive":
        return rng.uniform(0, 100, n)
    if kind == "special":  # nan/inf mixed with zeros, -0.0 and ordinary values
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.0, 0.5, 3.25e5, 1e-3])
        return rng.choice(pool, n)
    if kind == "special_int":
        return rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, 7.0, -12.0]), n)
    if kind == "zeros_nan":
        return rng.choice(np.array([np.nan, 0.0, -0.0, np.inf]), n)
    raise ValueError(kind)


FLOAT_KINDS = ["normal", "scaled", "magnitudes", "integral", "big_integral", "positive",
               "special", "special_int", "zeros_nan"]


def _values(dtype, kind, shape, rng):
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        if kind == "small":
            lo, hi = max(info.min, -20), 20
        else:
            lo, hi = info.min, info.max
        return rng.integers(lo, hi, n, endpoint=True, dtype=dtype).reshape(shape)
    if dtype.startswith("complex"):
        out = np.empty(n, dtype=np.complex128)  # set parts apart: inf * 1j would make nan
        out.real = _float_values(kind, shape, rng)
        out.imag = _float_values(FLOAT_KINDS[rng.integers(len(FLOAT_KINDS))], shape, rng)
        return out.reshape(shape)
    return _float_values(kind, shape, rng).reshape(shape)


def _pair(torch, array, dtype):
    """The same values as an ember and a torch tensor of `dtype`."""
    if dtype == "bfloat16":
        with np.errstate(over="ignore"):
            array = np.asarray(array, dtype=np.float32)
        return (ember.tensor(array).to(ember.bfloat16),
                torch.tensor(array).to(torch.bfloat16))
    with np.errstate(over="ignore"):  # float16 overflows to inf, as torch's cast does
        array = np.asarray(array, dtype=dtype)
    return ember.tensor(array), torch.tensor(array)


def _expected(t):
    return repr(t).replace("torch.", "ember.")


def _check(e, t, what=""):
    got, want = repr(e), _expected(t)
    assert got == want, f"{what}\n--- ember\n{got}\n--- torch\n{want}"
    assert str(e) == got


@pytest.fixture
def restore_options(torch_mod):
    """Restore both libraries' print options and default dtype after the test."""
    ember_opts = get_printoptions()
    torch_opts = torch_mod._tensor_str.get_printoptions()
    ember_default, torch_default = ember.get_default_dtype(), torch_mod.get_default_dtype()
    yield
    ember.set_printoptions(**ember_opts)
    torch_mod.set_printoptions(**torch_opts)
    ember.set_default_dtype(ember_default)
    torch_mod.set_default_dtype(torch_default)


def _cases(dtype):
    if dtype in FLOATS or dtype.startswith("complex"):
        return FLOAT_KINDS
    return ["small", "full"] if dtype != "bool" else ["bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_repr_matches_torch(torch_mod, dtype):
    rng = np.random.default_rng(DTYPES.index(dtype))
    for kind in _cases(dtype):
        for shape in SHAPES:
            e, t = _pair(torch_mod, _values(dtype, kind, shape, rng), dtype)
            _check(e, t, f"{dtype} {kind} {shape}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
def test_non_contiguous_views(torch_mod, dtype):
    rng = np.random.default_rng(1)
    e, t = _pair(torch_mod, _values(dtype, "normal" if dtype != "int64" else "small",
                                    (4, 3, 50), rng), dtype)
    _check(e.permute(2, 0, 1), t.permute(2, 0, 1))
    _check(e.reshape(12, 50).T, t.reshape(12, 50).T)
    _check(e.transpose(0, 2).reshape(150, 4), t.transpose(0, 2).reshape(150, 4))


EDGE_VALUES = [
    [0.99995, 1.0], [9.99995e-5, 1.0], [1e8, 1.0], [1.00001e8], [999.9, 1.0], [1000.1, 1.0],
    [65504.0, -65504.0], [-0.0], [-0.0, 1.5], [1e-4, 0.1], [123456789.0], [0.1, 0.2, 0.3],
    [np.nan], [np.inf, -np.inf], [np.nan, 1.0, 2.0], [np.nan, 0.5], [1e-45, 1.0],
    [5e-324, 1.0], [1.7e308, -1.0], [2.0 ** 60], [12345678.0, 0.5],
]


@pytest.mark.parametrize("dtype", FLOATS + ["complex128"])
@pytest.mark.parametrize("values", EDGE_VALUES, ids=str)
def test_edge_values(torch_mod, dtype, values):
    for shape in [(len(values),), ()] if len(values) == 1 else [(len(values),)]:
        array = np.array(values).reshape(shape)
        if dtype == "complex128":
            parts = array
            array = np.empty(shape, dtype=np.complex128)
            array.real, array.imag = parts, -parts[::-1] if parts.ndim else 0.5
        e, t = _pair(torch_mod, array, dtype)
        _check(e, t, f"{dtype} {values}")


def test_extreme_integers(torch_mod):
    for dtype in ["int8", "int16", "int32", "int64", "uint8"]:
        info = np.iinfo(dtype)
        e, t = _pair(torch_mod, np.array([info.min, 0, info.max, -1 if info.min else 1]), dtype)
        _check(e, t, dtype)


OPTION_SETS = [
    dict(precision=2), dict(precision=8), dict(precision=0), dict(threshold=5),
    dict(threshold=0), dict(edgeitems=1), dict(edgeitems=0), dict(edgeitems=5, threshold=50),
    dict(linewidth=40), dict(linewidth=10), dict(linewidth=150), dict(profile="short"),
    dict(profile="full"), dict(profile="default"), dict(sci_mode=True), dict(sci_mode=False),
    dict(profile="short", precision=6, sci_mode=True), dict(threshold=float("inf")),
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
def test_printoptions(torch_mod, restore_options, options):
    ember.set_printoptions(**options)
    torch_mod.set_printoptions(**options)
    assert get_printoptions() == torch_mod._tensor_str.get_printoptions()
    rng = np.random.default_rng(7)
    for dtype in ["float32", "float64", "int64", "complex64", "bool", "float16"]:
        for kind in (["normal", "magnitudes", "integral", "special"]
                     if dtype not in ("int64", "bool") else ["small"]):
            for shape in [(), (3,), (60,), (4, 25), (2, 3, 20), (3, 2, 2, 30)]:
                e, t = _pair(torch_mod, _values(dtype, kind, shape, rng), dtype)
                _check(e, t, f"{options} {dtype} {kind} {shape}")


def test_printoptions_context_restores(torch_mod, restore_options):
    before = get_printoptions()
    with printoptions(precision=1, threshold=3):
        e, t = ember.tensor([1.25, 2.0, 3.0, 4.0]), torch_mod.tensor([1.25, 2.0, 3.0, 4.0])
        with torch_mod._tensor_str.printoptions(precision=1, threshold=3):
            _check(e, t)
    assert get_printoptions() == before


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_default_dtype_changes_suffixes(torch_mod, restore_options, default):
    ember.set_default_dtype(getattr(ember, default))
    torch_mod.set_default_dtype(getattr(torch_mod, default))
    rng = np.random.default_rng(3)
    for dtype in DTYPES:
        for shape in [(3,), (0,), (2, 0), ()]:
            kind = "normal" if dtype in FLOATS or dtype.startswith("complex") else "small"
            if dtype == "bool":
                kind = "bool"
            e, t = _pair(torch_mod, _values(dtype, kind, shape, rng), dtype)
            _check(e, t, f"default {default}: {dtype} {shape}")


def _graph_pairs(torch, dtype):
    rng = np.random.default_rng(5)
    array = rng.standard_normal((2, 3))
    xe, xt = _pair(torch, array, dtype)
    xe.requires_grad_()
    xt.requires_grad_()
    yield xe, xt
    yield xe * 2, xt * 2
    yield xe + 1, xt + 1
    yield xe - xe, xt - xt
    yield xe / 3, xt / 3
    yield (xe * 2).sum(), (xt * 2).sum()
    yield xe.mean(), xt.mean()
    yield xe @ xe.T, xt @ xt.T
    yield xe.detach(), xt.detach()
    ye, yt = xe * 1, xt * 1
    ye[1:].add_(1)   # an in-place op through a view: CopySlices, a node PyTorch names in C++
    yt[1:].add_(1)
    yield ye, yt


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
def test_requires_grad_and_grad_fn(torch_mod, dtype):
    for e, t in _graph_pairs(torch_mod, dtype):
        _check(e, t, dtype)


def test_grad_suffix_wraps(torch_mod):
    # A long last line pushes the suffixes onto their own lines, indented under "tensor(".
    rng = np.random.default_rng(11)
    for n in range(1, 12):
        e, t = _pair(torch_mod, rng.standard_normal(n) * 1e3, "float64")
        e.requires_grad_()
        t.requires_grad_()
        _check(e, t)
        _check(e * 2, t * 2)


def test_device_suffix(torch_mod, cuda_standin):
    array = np.array([1.0, 2.5], dtype=np.float32)
    e = _wrap(array, ember.float32, ember.device("cuda:0"))
    plain = _expected(torch_mod.tensor(array))
    assert repr(e) == plain[:-1] + ", device='cuda:0')"
    e._requires_grad = True
    assert repr(e) == plain[:-1] + ", device='cuda:0', requires_grad=True)"
    empty = _wrap(np.zeros((0, 2), dtype=np.int32), ember.int32, ember.device("cuda:1"))
    plain = _expected(torch_mod.zeros((0, 2), dtype=torch_mod.int32))
    assert repr(empty) == "tensor([], device='cuda:1'" + plain[len("tensor([]"):]


def test_tensor_contents(torch_mod):
    e, t = _pair(torch_mod, np.arange(3.0), "float64")
    want = t.__repr__(tensor_contents="[...]").replace("torch.", "ember.")
    assert e.__repr__(tensor_contents="[...]") == want


def test_format(torch_mod):
    for value, dtype in [(1.5, "float32"), (-2.0, "float64"), (7, "int64"), (True, "bool"),
                         (0.1, "float16"), (1 + 2j, "complex64")]:
        e, t = _pair(torch_mod, np.array(value), dtype)
        for spec in ["", ".2f", ">12", "e"] if dtype not in ("int64", "bool") else ["", "5d"]:
            if dtype.startswith("complex") and spec == "e":
                continue
            assert format(e, spec) == format(t, spec), (value, dtype, spec)
    e, t = _pair(torch_mod, np.array([1.0, 2.0]), "float32")
    assert f"{e}" == f"{t}".replace("torch.", "ember.")
    with pytest.raises(TypeError) as ember_err:
        format(e, ".2f")
    with pytest.raises(TypeError) as torch_err:
        format(t, ".2f")
    assert str(ember_err.value) == str(torch_err.value)


def test_set_printoptions_is_exported():
    assert ember.set_printoptions is ember._printing.set_printoptions
