"""dtypes and type promotion against real PyTorch: every pair of dtypes, tensors of each rank
class (dimensioned, 0-dim) and Python / NumPy scalars; finfo/iinfo; default dtype; casts."""
import pickle

import numpy as np
import pytest

import ember

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]
SCALARS = [True, 3, -2, 2.5, 1j]


def tname(d):
    """torch's spelling of an ember dtype; complex32 (which ember lacks) maps to complex64."""
    return str(d).replace("ember.", "torch.")


def same(ember_dtype, torch_dtype):
    expected = str(torch_dtype).replace("complex32", "complex64")
    return tname(ember_dtype) == expected


def pair(torch, name, dim):
    shape = (2,) if dim else ()
    return (ember.ones(shape, dtype=getattr(ember, name)),
            torch.ones(shape, dtype=getattr(torch, name)))


def outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return exc


def assert_same_error(e_fn, t_fn):
    """Both raise the same exception type with the same text (module names aside)."""
    with pytest.raises(Exception) as t_exc:
        t_fn()
    with pytest.raises(type(t_exc.value)) as e_exc:
        e_fn()
    assert str(e_exc.value).replace("ember", "torch") == str(t_exc.value)


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_all_pairs(a, torch_mod):
    for b in NAMES:
        got = ember.promote_types(getattr(ember, a), getattr(ember, b))
        assert same(got, torch_mod.promote_types(getattr(torch_mod, a), getattr(torch_mod, b)))


@pytest.mark.parametrize("a", NAMES)
def test_can_cast_all_pairs(a, torch_mod):
    for b in NAMES:
        assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == \
            torch_mod.can_cast(getattr(torch_mod, a), getattr(torch_mod, b)), (a, b)


@pytest.mark.parametrize("a", NAMES)
def test_result_type_tensor_pairs(a, torch_mod):
    """Every pair, each operand dimensioned or 0-dim: priority classes as PyTorch's."""
    for b in NAMES:
        for da in (0, 1):
            for db in (0, 1):
                ea, ta = pair(torch_mod, a, da)
                eb, tb = pair(torch_mod, b, db)
                assert same(ember.result_type(ea, eb), torch_mod.result_type(ta, tb)), \
                    (a, da, b, db)


@pytest.mark.parametrize("a", NAMES)
def test_result_type_tensor_scalar(a, torch_mod):
    np_scalars = [np.float64(2), np.float32(2), np.float16(2), np.int64(2), np.int32(2),
                  np.uint8(3), np.bool_(True), np.complex128(1j)]
    for s in SCALARS + np_scalars:
        for dim in (0, 1):
            e, t = pair(torch_mod, a, dim)
            assert same(ember.result_type(e, s), torch_mod.result_type(t, s)), (a, dim, s)
            assert same(ember.result_type(s, e), torch_mod.result_type(s, t)), (a, dim, s)


def test_result_type_scalar_pairs(torch_mod):
    for s1 in SCALARS:
        for s2 in SCALARS:
            assert same(ember.result_type(s1, s2), torch_mod.result_type(s1, s2))


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_promotion_follows_default_dtype(default, torch_mod):
    ember.set_default_dtype(getattr(ember, default))
    torch_mod.set_default_dtype(getattr(torch_mod, default))
    try:
        for a in NAMES:
            for s in (2.5, 3, True):
                e, t = pair(torch_mod, a, 1)
                assert same(ember.result_type(e, s), torch_mod.result_type(t, s))
        checks = [lambda m: m.tensor(1.5), lambda m: m.tensor([1, 2.5]),
                  lambda m: m.arange(0.0, 3), lambda m: m.full((2,), 1.5),
                  lambda m: m.linspace(0, 1, 3), lambda m: m.zeros(2), lambda m: m.eye(2),
                  lambda m: m.tensor([1, 2]), lambda m: m.tensor(np.float32(1.0)),
                  lambda m: m.ones(2, dtype=m.int32) / 2]
        for make in checks:
            assert same(make(ember).dtype, make(torch_mod).dtype)
        assert same(ember.get_default_dtype(), torch_mod.get_default_dtype())
    finally:
        ember.set_default_dtype(ember.float32)
        torch_mod.set_default_dtype(torch_mod.float32)


def test_set_default_dtype_rejects_non_float(torch_mod):
    for name in ("int32", "complex64", "bool"):
        assert_same_error(lambda: ember.set_default_dtype(getattr(ember, name)),
                          lambda: torch_mod.set_default_dtype(getattr(torch_mod, name)))
    assert ember.get_default_dtype() is ember.float32


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes(name, torch_mod):
    e, t = getattr(ember, name), getattr(torch_mod, name)
    assert repr(e) == repr(t).replace("torch", "ember") and str(e) == repr(e)
    for attr in ("is_floating_point", "is_complex", "is_signed", "itemsize", "abbr"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert same(e.to_real(), t.to_real())
    expected = outcome(t.to_complex)
    if isinstance(expected, Exception):
        assert_same_error(e.to_complex, t.to_complex)
    else:
        assert same(e.to_complex(), expected)
    assert pickle.loads(pickle.dumps(e)) is e
    tensor = ember.zeros(2, dtype=e)
    assert ember.is_floating_point(tensor) == t.is_floating_point
    assert ember.is_complex(tensor) == t.is_complex


def test_dtype_aliases(torch_mod):
    for alias in ("half", "float", "double", "short", "int", "long", "cfloat", "cdouble"):
        assert tname(getattr(ember, alias)) == str(getattr(torch_mod, alias))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64",
                                  "complex128", None])
def test_finfo(name, torch_mod):
    e = ember.finfo(getattr(ember, name)) if name else ember.finfo()
    t = torch_mod.finfo(getattr(torch_mod, name)) if name else torch_mod.finfo()
    assert repr(e) == repr(t)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, attr) == getattr(t, attr), attr


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name, torch_mod):
    e, t = ember.iinfo(getattr(ember, name)), torch_mod.iinfo(getattr(torch_mod, name))
    assert repr(e) == repr(t)
    for attr in ("bits", "min", "max", "dtype"):
        assert getattr(e, attr) == getattr(t, attr), attr


def test_finfo_iinfo_errors(torch_mod):
    assert_same_error(lambda: ember.iinfo(ember.bool), lambda: torch_mod.iinfo(torch_mod.bool))
    assert_same_error(lambda: ember.finfo(ember.int32),
                      lambda: torch_mod.finfo(torch_mod.int32))
    assert_same_error(lambda: ember.iinfo(ember.float32),
                      lambda: torch_mod.iinfo(torch_mod.float32))
    with pytest.raises(TypeError):
        ember.finfo(1)
    with pytest.raises(TypeError):
        ember.promote_types(ember.float32, 1)


# ---------------------------------------------------------------------- arithmetic seeds
def test_uint8_division_gives_float32(torch_mod):
    e = ember.tensor([100, 7], dtype=ember.uint8) / 50
    t = torch_mod.tensor([100, 7], dtype=torch_mod.uint8) / 50
    assert same(e.dtype, t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy())


def test_uint8_wraps(torch_mod):
    e = ember.tensor([200, 5], dtype=ember.uint8) + 100
    t = torch_mod.tensor([200, 5], dtype=torch_mod.uint8) + 100
    assert same(e.dtype, t.dtype) and e.tolist() == t.tolist() == [44, 105]


def test_float16_overflows_to_inf(torch_mod):
    e = ember.tensor([12.0], dtype=ember.float16)
    t = torch_mod.tensor([12.0], dtype=torch_mod.float16)
    if hasattr(e, "exp"):
        assert e.exp().tolist() == t.exp().tolist() == [float("inf")]
    big_e, big_t = e * 10000, t * 10000
    assert big_e.tolist() == big_t.tolist() and same(big_e.dtype, big_t.dtype)


def test_inplace_int_plus_float_raises(torch_mod):
    def run(m):
        x = m.tensor([1, 2])
        x += 1.5
    assert_same_error(lambda: run(ember), lambda: run(torch_mod))


@pytest.mark.parametrize("scalar", [np.float64(2), np.float32(2), np.int64(2), np.int32(3),
                                    np.bool_(True), np.complex128(1j), np.float16(2)])
@pytest.mark.parametrize("name", ["float32", "int32", "float16", "uint8", "bool"])
def test_numpy_scalar_operands(scalar, name, torch_mod):
    e = ember.ones(2, dtype=getattr(ember, name))
    t = torch_mod.ones(2, dtype=getattr(torch_mod, name))
    for fn in (lambda x: scalar * x, lambda x: x * scalar, lambda x: x + scalar):
        expected = outcome(fn, t)
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                fn(e)
            continue
        got = fn(e)
        assert isinstance(got, ember.Tensor)
        assert same(got.dtype, expected.dtype), (name, scalar)
        np.testing.assert_allclose(np.asarray(got.tolist()), np.asarray(expected.tolist()))


@pytest.mark.parametrize("name", NAMES)
def test_cast_methods(name, torch_mod):
    methods = ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte",
               "bool"]
    values = [0.0, 1.0, 2.5, -3.0] if name != "bool" else [True, False]
    if name == "uint8":
        values = [0, 1, 200]
    e = ember.tensor(values).to(getattr(ember, name))
    t = torch_mod.tensor(values).to(getattr(torch_mod, name))
    for m in methods:
        got, expected = getattr(e, m)(), getattr(t, m)()
        assert same(got.dtype, expected.dtype)
        assert got.tolist() == expected.tolist(), (name, m)
    assert e.float() is e or name != "float32"
    assert e.to(e.dtype) is e


def test_type_and_type_as(torch_mod):
    e, t = ember.tensor([1.5, -2.0]), torch_mod.tensor([1.5, -2.0])
    assert e.type() == t.type() == "torch.FloatTensor"
    for target in ("torch.LongTensor", "torch.DoubleTensor", "torch.ByteTensor"):
        assert same(e.type(target).dtype, t.type(target).dtype)
    assert same(e.type(ember.int32).dtype, t.type(torch_mod.int32).dtype)
    assert same(e.type(ember.LongTensor).dtype, t.type(torch_mod.LongTensor).dtype)
    assert e.type(ember.float32) is e
    assert_same_error(lambda: e.type("foo"), lambda: t.type("foo"))
    other_e, other_t = ember.zeros(1, dtype=ember.int16), torch_mod.zeros(1, dtype=torch_mod.int16)
    assert same(e.type_as(other_e).dtype, t.type_as(other_t).dtype)
    assert e.type_as(other_e).tolist() == t.type_as(other_t).tolist()
    assert ember.zeros(2, dtype=ember.int64).type() == "torch.LongTensor"


def test_to_dtype_variants(torch_mod):
    e, t = ember.tensor([1.7, -2.2]), torch_mod.tensor([1.7, -2.2])
    cases = [((ember.int32,), (torch_mod.int32,), {}),
             (("cpu", ember.float64), ("cpu", torch_mod.float64), {}),
             ((ember.float64, True), (torch_mod.float64, True), {}),
             ((ember.zeros(1, dtype=ember.int64),), (torch_mod.zeros(1, dtype=torch_mod.int64),),
              {})]
    for ea, ta, kw in cases:
        got, expected = e.to(*ea, **kw), t.to(*ta, **kw)
        assert same(got.dtype, expected.dtype) and got.tolist() == expected.tolist()
    got = e.to(device="cpu", dtype=ember.float64)
    assert got.dtype is ember.float64
    copied = e.to(ember.float32, copy=True)
    assert copied is not e and copied.tolist() == e.tolist()
    assert e.to(None) is e
    assert_same_error(lambda: e.to("float32"), lambda: t.to("float32"))


@pytest.mark.parametrize("source", ["bfloat16", "float16", "float32", "float64"])
@pytest.mark.parametrize("target", ["uint8", "int8", "int16", "int32", "int64"])
def test_float_to_integer_cast_wraps_as_torch(source, target, torch_mod):
    # NOTE: C leaves out-of-range float-to-integer casts undefined; PyTorch goes through int64
    # for uint8, and NumPy's (and ml_dtypes') own casts differ by CPU. Values chosen to wrap.
    values = [-3.0, 300.0, 2.7, -2.7, 255.0, -129.0, 40000.0, 0.0]
    e = ember.tensor(values, dtype=getattr(ember, source)).to(getattr(ember, target))
    t = torch_mod.tensor(values, dtype=getattr(torch_mod, source)).to(getattr(torch_mod, target))
    assert e.tolist() == t.tolist()
