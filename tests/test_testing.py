"""ember.testing against torch.testing on the same inputs: assert_close's pass/fail decisions
and its exact messages (mismatch counts, greatest differences and their indices, attribute
and structure errors), assert_allclose, and make_tensor's values for a shared seed."""
import warnings

import numpy as np
import pytest

import ember

NAN, INF = float("nan"), float("inf")
CASES = [
    ("float32", lambda m: (m.tensor([1., 2., 3.]), m.tensor([1., 2.1, 3.])), {}),
    ("float64 2-d", lambda m: (m.tensor([[1., 2.], [3., 4.]], dtype=m.float64),
                               m.tensor([[1., 2.5], [3., 0.]], dtype=m.float64)), {}),
    ("int64 equal", lambda m: (m.tensor([1, 2, 3]), m.tensor([1, 5, 3])), {}),
    ("int32 tolerance", lambda m: (m.tensor([1, 2], dtype=m.int32),
                                   m.tensor([1, 4], dtype=m.int32)), {"rtol": 0.1, "atol": 0.5}),
    ("0-dim", lambda m: (m.tensor(1.5), m.tensor(1.6)), {}),
    ("dtype", lambda m: (m.tensor([1.]), m.tensor([1.], dtype=m.float64)), {}),
    ("shape", lambda m: (m.tensor([1.]), m.tensor([1., 2.])), {}),
    ("nan", lambda m: (m.tensor([1., NAN]), m.tensor([1., NAN])), {}),
    ("equal_nan", lambda m: (m.tensor([1., NAN]), m.tensor([1., NAN])), {"equal_nan": True}),
    ("numbers int/float", lambda m: (1, 1.0), {}),
    ("numbers", lambda m: (1.0, 1.1), {}),
    ("sequence", lambda m: ([m.tensor([1.]), m.tensor([2.])], [m.tensor([1.]), m.tensor([3.])]),
     {}),
    ("sequence length", lambda m: ([1.0], [1.0, 2.0]), {}),
    ("mapping keys", lambda m: ({"a": m.tensor([1.])}, {"b": m.tensor([1.])}), {}),
    ("msg string", lambda m: ({"a": m.tensor([1.])}, {"a": m.tensor([1.2])}), {"msg": "custom"}),
    ("msg callable", lambda m: (m.tensor([1.]), m.tensor([1.2])),
     {"msg": lambda s: "Header\n" + s}),
    ("only rtol", lambda m: (m.tensor([1.]), m.tensor([1.2])), {"rtol": 0.1}),
    ("None", lambda m: (None, 1), {}),
    ("booleans", lambda m: (True, False), {}),
    ("stride", lambda m: (m.ones(2, 3).t(), m.ones(3, 2)), {"check_stride": True}),
    ("promoted half", lambda m: (m.tensor([1., 0.]), m.tensor([1., 0.5]).half()),
     {"check_dtype": False}),
    ("complex", lambda m: (m.tensor([1 + 1j, 2]), m.tensor([1 + 1j, 2.5j])), {}),
    ("bool tensors", lambda m: (m.tensor([True, False]), m.tensor([True, True])), {}),
    ("within tolerance", lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.00001])), {}),
    ("infinities", lambda m: (m.tensor([1., INF]), m.tensor([1., INF])), {}),
    ("opposite infinities", lambda m: (m.tensor([1., INF]), m.tensor([1., -INF])), {}),
    ("bfloat16", lambda m: (m.tensor([0., 1.]).bfloat16(), m.tensor([0., 1.1]).bfloat16()), {}),
    ("float16", lambda m: (m.tensor([0., 1., 7.]).half(), m.tensor([0.001, 1.1, 7.]).half()),
     {}),
    ("numpy arrays", lambda m: (np.array([1., 2.]), np.array([1., 3.])), {}),
    ("one of many", lambda m: (m.zeros(3, 4), m.zeros(3, 4).index_put_(
        (m.tensor([2]), m.tensor([1])), m.tensor(5.))), {}),
]


def _outcome(m, make, kwargs):
    actual, expected = make(m)
    try:
        m.testing.assert_close(actual, expected, **kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("make,kwargs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_assert_close_matches_torch(make, kwargs, torch_mod):
    theirs = _outcome(torch_mod, make, kwargs)
    ours = _outcome(ember, make, kwargs)
    if theirs is not None:   # (dtype and Size reprs carry the module's name)
        theirs = (theirs[0], theirs[1].replace("torch.", "ember."))
    assert ours == theirs


def test_unsupported_pair_is_a_type_error(torch_mod):
    for m in (ember, torch_mod):
        with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
            m.testing.assert_close(m.tensor([1.]), [1.])


@pytest.mark.parametrize("actual,expected", [([1., 2.], [1., 2.001]), ([1., 2.], [1., 2.00001]),
                                             ([1, 2], [1, 3])])
def test_assert_allclose_matches_torch(actual, expected, torch_mod):
    results = []
    for m in (ember, torch_mod):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                m.testing.assert_allclose(m.tensor(actual), expected)
                outcome = None
            except AssertionError as exc:
                outcome = str(exc)
        results.append((outcome, [(w.category, str(w.message)) for w in caught]))
    assert results[0] == results[1]


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", [{}, {"low": -2, "high": 3}, {"noncontiguous": True},
                                    {"exclude_zero": True}, {"low": 0.5, "high": 1.5}],
                         ids=["default", "range", "noncontiguous", "exclude_zero", "fraction"])
def test_make_tensor_matches_torch_for_a_seed(dtype, kwargs, torch_mod):
    if dtype == "bool" and "low" in kwargs:
        kwargs = {}
    made = []
    for m in (ember, torch_mod):
        m.manual_seed(0)
        t = m.testing.make_tensor(3, 4, dtype=getattr(m, dtype), device="cpu", **kwargs)
        made.append((t.float() if dtype == "bfloat16" else t, t.stride(), t.is_contiguous()))
    (a, *meta_a), (b, *meta_b) = made
    assert meta_a == meta_b
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_make_tensor_shapes_and_grad(torch_mod):
    for shape in ((2, 3), [(2, 3)], [[4]], ()):
        t = ember.testing.make_tensor(*shape, dtype=ember.float32, device="cpu",
                                      requires_grad=True)
        e = torch_mod.testing.make_tensor(*shape, dtype=torch_mod.float32, device="cpu")
        assert tuple(t.shape) == tuple(e.shape) and t.requires_grad and t.is_leaf


@pytest.mark.parametrize("kwargs", [{"dtype": "int64", "requires_grad": True},
                                    {"dtype": "float32", "low": 3, "high": 1},
                                    {"dtype": "float32", "low": NAN},
                                    {"dtype": "uint8", "low": -5, "high": -1}],
                         ids=["integral grad", "low>=high", "nan", "outside dtype"])
def test_make_tensor_errors_match_torch(kwargs, torch_mod):
    messages = []
    for m in (ember, torch_mod):
        kw = dict(kwargs, dtype=getattr(m, kwargs["dtype"]))
        with pytest.raises(ValueError) as exc:
            m.testing.make_tensor(3, device="cpu", **kw)
        messages.append(str(exc.value).replace("torch.", "ember."))
    assert messages[0] == messages[1]


def test_make_tensor_low_equal_high_warns_like_torch(torch_mod):
    for m in (ember, torch_mod):
        with pytest.warns(FutureWarning, match="Passing `low==high`"):
            t = m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=1.0, high=1.0)
        assert t.tolist() == [1.0, 1.0]
