"""Regression tests for the differential fuzzer's findings in small modules (activation's prelu
and softmax helpers, nn.functional's boolean_dispatch, the sym_* helpers, DLPack, runtime
queries, tensor()/as_tensor()/asarray()'s argument checks), each against real PyTorch on the
same inputs: the same result, or the same exception type (and message where it is PyTorch's
own text)."""
import warnings

import numpy as np
import pytest

import ember

NAN = float("nan")


def outcome(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(lib)
        except Exception as exc:   # noqa: BLE001 (the exception is what is compared)
            return "raise", exc


def builtin_kind(exc):
    """The exception's first builtin class (torch's own errors subclass the builtins)."""
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


def assert_same_outcome(fn, torch, message=True):
    t_kind, t = outcome(fn, torch)
    e_kind, e = outcome(fn, ember)
    assert e_kind == t_kind, (t, e)
    if t_kind == "raise":
        assert builtin_kind(e) is builtin_kind(t), (t, e)
        if message:
            assert str(e).replace("ember", "torch") == str(t), (t, e)
        return None
    return t, e


def _values(t, e):
    if hasattr(t, "detach"):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6,
                                   equal_nan=True)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    else:
        assert e == t


PRELU = {
    "dtype_mismatch": lambda L: L.prelu(L.ones(2, 3), L.ones(3, dtype=L.float64)),
    "zero_dim": lambda L: L.prelu(L.tensor(1.), L.ones(3)),
    "channels": lambda L: L.prelu(L.ones(2, 3), L.ones(4)),
    "weight_ndim": lambda L: L.prelu(L.ones(2, 3), L.ones(3, 1)),
    "integer": lambda L: L.prelu(L.tensor([1, -2]), L.tensor([1])),
    "scalar_weight_0d": lambda L: L.prelu(L.tensor(-1.5), L.tensor([0.25])),
    "per_channel": lambda L: L.nn.functional.prelu(L.tensor([[[-1., 2.], [3., -4.]]]),
                                                   L.tensor([0.5, 0.1])),
    "method": lambda L: L.tensor([-2., 1.]).prelu(L.tensor(0.3)),
}


@pytest.mark.parametrize("name", sorted(PRELU))
def test_prelu_matches_torch(name, torch_mod):
    same = assert_same_outcome(PRELU[name], torch_mod)
    if same:
        _values(*same)


ACTIVATIONS = {
    "softmin_stacklevel": lambda L: L.nn.functional.softmin(L.ones(3), _stacklevel="x"),
    "softmax_stacklevel": lambda L: L.nn.functional.softmax(L.ones(3), _stacklevel=1.5),
    "log_softmax_stacklevel": lambda L: L.nn.functional.log_softmax(
        L.ones(2, 3), _stacklevel=L.ones(2)),
    "softmax_dim_ok": lambda L: L.nn.functional.softmax(L.tensor([1., 2.]), 0,
                                                        _stacklevel="x"),
    "gumbel_eps_tensor": lambda L: L.nn.functional.gumbel_softmax(L.ones(3), eps=L.ones(2)),
    "hardtanh_crossed": lambda L: L.nn.functional.hardtanh_(L.tensor([0.3, -2., 2.]), 1.,
                                                            0.),
    "hardtanh_checked": lambda L: L.nn.functional.hardtanh(L.tensor([0.3]), 1., 0.),
    # NaN through the kernels' comparisons: kept by threshold and hardshrink, NaN by softshrink
    "threshold_nan": lambda L: L.nn.functional.threshold(L.tensor([NAN, 1., -3.]), .5, 9.),
    "hardshrink_nan": lambda L: L.nn.functional.hardshrink(L.tensor([NAN, 1., -.3])),
    "softshrink_nan": lambda L: L.nn.functional.softshrink(L.tensor([NAN, 1., -3.])),
    "softshrink_bool_lambda": lambda L: L.nn.functional.softshrink(L.tensor([1., -2.]), False),
    "softshrink_negative": lambda L: L.nn.functional.softshrink(L.ones(2).double(), -1),
    "rrelu_bounds_first": lambda L: L.nn.functional.rrelu(L.ones(2, dtype=L.uint8), .5, .2),
    "celu_zero_alpha_first": lambda L: L.celu(L.ones(2, dtype=L.int64), 0.),
    "leaf_in_place_first": lambda L: L.nn.functional.leaky_relu_(
        L.ones(2, dtype=L.complex64, requires_grad=True)),
    "complex_scalar": lambda L: L.celu(L.ones(2).double(), 1.5 - 0.5j),
    "complex_scalar_real": lambda L: L.threshold_(L.ones(2).double(), np.complex128(3),
                                                  np.complex64(2)),
    "complex_threshold": lambda L: L.nn.functional.threshold(L.ones(2), 1.5 - 0.5j, 2),
    "glu_halving_first": lambda L: L.nn.functional.glu(L.ones(3, dtype=L.int16)),
    "glu_dim": lambda L: L.nn.functional.glu(L.ones(2, 3), 5),
    "glu_not_tensor": lambda L: L.nn.functional.glu(3),
    "glu_tensor_dim": lambda L: L.nn.functional.glu(L.ones(2, 4), L.ones(2)),
    "glu": lambda L: L.nn.functional.glu(L.tensor([[1., -2., 0.5, 3.]]), 1),
    "threshold_bool": lambda L: L.nn.functional.threshold(L.ones(2, dtype=L.bool), 0, 1),
    "hardshrink_dtype_first": lambda L: L.nn.functional.hardshrink(
        L.ones(2, dtype=L.int16), 1.5 - 0.5j),
    "softplus_real_complex": lambda L: L.nn.functional.softplus(
        L.tensor([-1., 3.]).double(), threshold=np.complex128(2)),
    "relu_inplace_not_tensor": lambda L: L.nn.functional.relu("x", inplace=True),
    "silu_complex_grad": lambda L: L.nn.functional.silu(
        L.ones(2, dtype=L.complex64, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_edge_cases_match_torch(name, torch_mod):
    same = assert_same_outcome(ACTIVATIONS[name], torch_mod, message=False)
    if same:
        _values(*same)


def _dispatch(L, if_true, if_false, name="f"):
    return L.nn.functional.boolean_dispatch("flag", 1, False, if_true, if_false, "m", name)


def _doc_a():
    """A."""


def _doc_b():
    """B."""


def _no_doc():
    pass


BOOLEAN_DISPATCH = {
    "two_docs": lambda L: _dispatch(L, _doc_a, _doc_b),
    "tensors_have_no_doc": lambda L: _dispatch(L, L.ones(1), L.ones(2), name=3),
    "dtype_doc_is_read_only": lambda L: _dispatch(L, L.float32, _doc_a),
    "none_doc_is_read_only": lambda L: _dispatch(L, None, _doc_a),
    "name_must_be_str": lambda L: _dispatch(L, _no_doc, _no_doc, name=None).__name__,
}


@pytest.mark.parametrize("name", sorted(BOOLEAN_DISPATCH))
def test_boolean_dispatch_matches_torch(name, torch_mod):
    assert_same_outcome(BOOLEAN_DISPATCH[name], torch_mod, message=False)


def test_boolean_dispatch_shares_the_docstring(torch_mod):
    for lib in (ember, torch_mod):
        def if_true(x, flag=False):
            """Doc."""
            return "true"

        def if_false(x, flag=False):
            return "false"
        fn = _dispatch(lib, if_true, if_false, name="g")
        assert (fn(1), fn(1, True), fn(1, flag=True)) == ("false", "true", "true")
        assert fn.__doc__ == if_false.__doc__ == "Doc." and fn.__name__ == "g"


SYMBOLIC = {
    "ite_int_condition": lambda L: L.sym_ite(1, 2, 3),
    "ite_type_mismatch": lambda L: L.sym_ite(True, 1, 2.0),
    "ite": lambda L: L.sym_ite(False, 1, 2),
    "sum_varargs": lambda L: L.sym_sum(1, 2, 3),
    "sum_list": lambda L: L.sym_sum([1, 2.5]),
    "sum_one_number": lambda L: L.sym_sum(4),
    "fresh_size": lambda L: L.sym_fresh_size(5),
    "fresh_size_list": lambda L: L.sym_fresh_size([2.5]),
    "fresh_size_none": lambda L: L.sym_fresh_size(None),
    "fresh_size_many": lambda L: L.sym_fresh_size([1, 2]),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_symbolic_scalars_match_torch(name, torch_mod):
    same = assert_same_outcome(SYMBOLIC[name], torch_mod, message=False)
    if same:
        t, e = same
        assert type(e) is type(t) and e == t


def test_sym_sum_of_tensors_matches_torch(torch_mod):
    same = assert_same_outcome(lambda L: L.sym_sum(L.ones(1, 3), L.ones(3)), torch_mod)
    _values(*same)


RUNTIME = {
    "vulkan_with_arguments": lambda L: L.is_vulkan_available(1, x=2),
    "typename_bfloat16": lambda L: L.typename(L.bfloat16).split(".")[-1],
    "from_dlpack_number": lambda L: L.from_dlpack(3),
    "from_dlpack_capsule_options": lambda L: L.from_dlpack("x", copy=True),
    "from_dlpack_requires_grad": lambda L: L.from_dlpack(L.ones(2, requires_grad=True)),
    "from_dlpack_copy_tensor": lambda L: L.from_dlpack(L.ones(2), copy=L.ones(3)).sum(),
}


@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_runtime_and_dlpack_match_torch(name, torch_mod):
    same = assert_same_outcome(RUNTIME[name], torch_mod)
    if same:
        _values(*same)


CREATION = {
    "dtype_as_data_int": lambda L: L.tensor(L.float32, dtype=L.int16),
    "dtype_as_data_float": lambda L: L.tensor(L.float32, dtype=L.float32),
    "none_as_data_with_dtype": lambda L: L.tensor(None, dtype=L.complex64),
    "none_as_data": lambda L: L.tensor(None),
    "nested_none": lambda L: L.tensor([None], dtype=L.float32),
    "asarray_none_int": lambda L: L.asarray(None, dtype=L.int8),
    "as_tensor_positional_dtype": lambda L: L.as_tensor([1], L.float32),
    "tensor_requires_grad_none": lambda L: L.tensor([1.], requires_grad=None),
    "tensor_dtype_bool": lambda L: L.tensor([], dtype=False),
    "asarray_copy_int": lambda L: L.asarray([1], copy=0),
    "asarray_requires_grad_int": lambda L: L.asarray([1.], requires_grad=1),
    "tensor_ok": lambda L: L.tensor([1, 2], dtype=L.float64, requires_grad=True),
    "asarray_requires_grad_none": lambda L: L.asarray([1.], requires_grad=None),
    "polar_integers": lambda L: L.polar(L.tensor([1, 2]), L.tensor([1, 2])),
    "polar_two_dtypes": lambda L: L.polar(L.tensor([1., 2.]), L.tensor([1., 2.]).double()),
    "polar": lambda L: L.polar(L.tensor([1., 2.]), L.tensor([0.5, -1.])),
    # out= is the tensor written and returned (ember once ignored it and returned a new one)
    "polar_out": lambda L: (lambda o: o if L.polar(L.tensor([1., 2.]), L.tensor([0.5, -1.]),
                                                   out=o) is o else None)(
        L.empty(2, dtype=L.complex64)),
    "complex_out": lambda L: (lambda o: o if L.complex(L.tensor([1., 2.]), L.tensor([3., 4.]),
                                                       out=o) is o else None)(
        L.empty(2, dtype=L.complex64)),
    "randn_bool_size": lambda L: L.randn(2, True).shape,
    "zeros_bool_first": lambda L: L.zeros(True, 2),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_argument_errors_match_torch(name, torch_mod):
    same = assert_same_outcome(CREATION[name], torch_mod,
                               message=name.startswith(("as_tensor", "tensor_", "asarray_c")))
    if same:
        _values(*same)
