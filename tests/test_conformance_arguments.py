"""PyTorch's argument parser (ember/_signatures): argument types checked before the op runs,
with torch's exception types and messages; calls torch accepts still accepted, with torch's
results. Every case runs on both libraries."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def outcome(L, call):
    try:
        out = call(L)
    except Exception as exc:   # noqa: BLE001 (the exception is the result compared)
        return type(exc).__name__, str(exc)
    if isinstance(out, (L.Tensor, tuple, list)):
        return "ok", _values(out)
    return "ok", out


def _values(out):
    if isinstance(out, (tuple, list)):
        return [_values(o) for o in out]
    return str(out.dtype).split(".")[-1], tuple(out.shape), out.detach().tolist()


def X(L):
    return L.arange(6.).reshape(2, 3)


# Calls torch's parser rejects: the exception type and the whole message must match.
REJECTED = {
    "positional int given str": lambda L: L.select(X(L), "a", 0),
    "method int given str": lambda L: X(L).select(0, "a"),
    "keyword bool given Tensor": lambda L: L.zeros(2, requires_grad=L.ones(1)),
    "keyword bool given int": lambda L: X(L).amin(0, keepdim=-3),
    "bool given numpy bool": lambda L: X(L).amax(0, keepdim=np.True_),
    "Number given 1-d tensor": lambda L: X(L).hardshrink(L.ones(1)),
    "int given bool": lambda L: X(L).flatten(end_dim=False),
    "int given 1-d tensor": lambda L: X(L).flatten(end_dim=L.ones(3, dtype=L.int64)),
    "float given complex": lambda L: L.pairwise_distance(X(L), X(L), eps=1.5 - 0.5j),
    "Tensor given str": lambda L: L.add(X(L), "a"),
    "Tensor given None": lambda L: L.atan2(X(L), None),
    "str given int": lambda L: L.scatter_reduce(X(L), 0, L.zeros(2, 3, dtype=L.int64), X(L),
                                                3),
    "no-argument method given one": lambda L: X(L).contiguous(0),
    "cast method given one": lambda L: X(L).double(None),
    "too many positional": lambda L: L.select(X(L), 0, 0, 1),
    "one missing": lambda L: X(L).flip(),
    "two missing": lambda L: L.select(X(L)),
    "type checked before missing": lambda L: L.select(np.float32(1.5)),
    "unexpected keyword": lambda L: L.select(X(L), 0, 0, bogus=1),
    "multiple values": lambda L: L.select(X(L), 0, 0, dim=1),
    "int list given int among others": lambda L: L.flip(X(L), 0),
    "int list first element float": lambda L: L.zeros((1.5, 2)),
    "int list later element float": lambda L: X(L).expand((2, 1.5)),
    "int list later element str": lambda L: L.sum(X(L), (0, "a")),
    "varargs int list lone float": lambda L: X(L).expand(1.5),
    "varargs after a list": lambda L: L.zeros((2, 3), (4, 5)),
    "tensor list element": lambda L: L.cat([X(L), 1.5]),
    "tensor list first element": lambda L: L.cat([1.5, X(L)]),
    "one plausible overload": lambda L: L.sum(X(L), "a", 3),
    "keepdim positional int": lambda L: X(L).sum(0, 1),
    "full fill_value tensor": lambda L: L.full((2,), L.ones(2)),
    "method of nn builtin": lambda L: L.nn.functional.linear(X(L)),
    # nn.functional's Python functions that hand their arguments to a torch builtin
    "F wrapper: Tensor given str": lambda L: L.nn.functional.cosine_embedding_loss(
        "a", X(L), L.ones(2)),
    "F wrapper: float given tuple": lambda L: L.nn.functional.cosine_embedding_loss(
        X(L), X(L), L.ones(2), ()),
    "F wrapper: int list given str": lambda L: L.nn.functional.layer_norm(X(L), "a"),
    "F wrapper: bool given Tensor": lambda L: L.nn.functional.max_pool1d_with_indices(
        X(L), 2, ceil_mode=L.ones(1)),
    "F wrapper: rms_norm shape given numpy int": lambda L: L.nn.functional.rms_norm(
        X(L), np.int32(3)),
    "F wrapper named after its builtin: nll_loss": lambda L: L.nn.functional.nll_loss(
        "a", L.zeros(2, dtype=L.int64)),
    "F wrapper named after its builtin: cross_entropy": lambda L: L.nn.functional.cross_entropy(
        X(L), L.zeros(2, dtype=L.int64), ignore_index=1.5),
    "F wrapper named after its builtin: unfold": lambda L: L.nn.functional.unfold(1.5, 2),
    "F wrapper named after its builtin: fold": lambda L: L.nn.functional.fold(
        "a", (3, 3), 2),
    "deprecated form hidden": lambda L: L.add(X(L), "a", X(L)),
    "unknown keyword, one overload fits": lambda L: L.sum(X(L), 0, bogus=1),
    # torch.linalg's builtins (their signatures read from the ATen schemas)
    "linalg Tensor given str": lambda L: L.linalg.matrix_power("a", 2),
    "linalg int given float": lambda L: L.linalg.matrix_power(L.ones(2, 2), 1.5),
    "linalg keyword int given str": lambda L: L.linalg.cross(X(L), X(L), dim="a"),
    "linalg A given list": lambda L: L.linalg.diagonal([1, 2]),
    "keyword-only memory_format": lambda L: X(L).contiguous(0),
}


@pytest.mark.parametrize("name", REJECTED)
def test_rejected_calls_raise_torchs_type_error_and_message(name):
    t, e = outcome(torch, REJECTED[name]), outcome(ember, REJECTED[name])
    assert t[0] == "TypeError", t
    assert e == t


# Calls where torch lists its overloads: the whole message matches, the "didn't match"
# detail lines included (PyTorch prints one only under an overload whose item count, its "*"
# marker included and its `out` not, equals the call's argument count).
COMBINATIONS = {
    "hsplit given bool": lambda L: L.hsplit(X(L), True),
    "hsplit method given str": lambda L: X(L).hsplit("a"),
    "max given float": lambda L: L.max(X(L), 1.5),
    "view given None": lambda L: X(L).view(None),
    "dtype given str": lambda L: L.sum(X(L), dtype="float32"),
    "linalg matrix_norm ord given Tensor": lambda L: L.linalg.matrix_norm(X(L), X(L)),
    "unknown keyword, two overloads fit": lambda L: L.sum(X(L), bogus=1),
    "keyword-only overloads print no detail": lambda L: L.clamp(X(L), min="a"),
    "isin given two numbers": lambda L: L.isin(3, 4),
}


@pytest.mark.parametrize("name", COMBINATIONS)
def test_overload_lists_match(name):
    t, e = outcome(torch, COMBINATIONS[name]), outcome(ember, COMBINATIONS[name])
    assert t[0] == e[0] == "TypeError"
    assert "received an invalid combination of arguments" in t[1]
    assert e[1] == t[1]


# Calls torch accepts: ember accepts them too and gives torch's values and dtypes.
ACCEPTED = {
    "view varargs": lambda L: X(L).view(3, 2),
    "view lone int": lambda L: X(L).view(6),
    "view Size": lambda L: X(L).view(L.Size([3, 2])),
    "zeros varargs": lambda L: L.zeros(2, 3),
    "zeros tuple": lambda L: L.zeros((2, 3)),
    "flip method lone int": lambda L: X(L).flip(0),
    "permute varargs": lambda L: X(L).permute(1, 0),
    "int given numpy int": lambda L: L.select(X(L), np.int64(1), np.int8(0)),
    "int given 0-d int tensor": lambda L: L.select(X(L), L.tensor(1), 0),
    "SymInt given 1-element int tensor": lambda L: L.select(X(L), 1, L.tensor([2])),
    "Number given 0-d tensor": lambda L: X(L).hardshrink(L.tensor(2.)),
    "Number given numpy float": lambda L: L.add(X(L), X(L), alpha=np.float32(2)),
    "float given numpy int": lambda L: L.pairwise_distance(X(L), X(L), eps=np.int64(1)),
    "int list given numpy ints": lambda L: L.sum(X(L), (np.int64(0), np.int32(1))),
    "int[1] given None": lambda L: L.amin(X(L), dim=None),
    "sum dim None": lambda L: L.sum(X(L), None),
    "numbers as tensors": lambda L: L.subtract(3, 3),
    "numbers as tensors, float": lambda L: L.mul(1.5, 2),
    "deprecated add alpha": lambda L: L.add(X(L), 2, X(L)),
    "deprecated sub_ alpha": lambda L: X(L).sub_(2, L.ones(2, 3)),
    "deprecated addcmul value": lambda L: X(L).addcmul(0.5, X(L), X(L)),
    "deprecated addbmm beta": lambda L: L.ones(2, 2).addbmm(0.5, L.ones(3, 2, 2),
                                                            L.ones(3, 2, 2)),
    "deprecated addbmm_ beta alpha": lambda L: L.ones(2, 2).addbmm_(2, 3, L.ones(3, 2, 2),
                                                                    L.ones(3, 2, 2)),
    "deprecated addbmm function": lambda L: L.addbmm(0.5, L.ones(2, 2), 2, L.ones(3, 2, 2),
                                                     L.ones(3, 2, 2)),
    "rot90 default dims": lambda L: X(L).rot90(),
    "bool after the first int of a size": lambda L: L.ones(3).repeat(1, True),
    "optional tensor None": lambda L: L.nn.functional.linear(X(L), L.ones(4, 3), None),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_calls_give_torchs_results(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (torch warns of a deprecated overload once only)
        t = outcome(torch, ACCEPTED[name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = outcome(ember, ACCEPTED[name])
    assert t[0] == "ok", t
    assert e == t
    deprecation = [w for w in caught if "is deprecated" in str(w.message)]
    assert bool(deprecation) == ("deprecated" in name)


# Two errors in one call: the shapes that do not broadcast are reported before the dtype
# that has no kernel, as torch's TensorIterator does.
BROADCAST_FIRST = {
    "lcm": lambda L: L.lcm(L.ones(2, dtype=L.int32), L.ones(3)),
    "less complex": lambda L: L.less(L.ones(3, dtype=L.complex64), L.ones(2)),
    "bitwise_xor float": lambda L: L.bitwise_xor(L.ones(3, dtype=L.int8), L.ones(4)),
    "atan2 complex": lambda L: L.atan2(L.ones(3, dtype=L.complex64), L.ones(2)),
    "gcd bool": lambda L: L.gcd(L.ones(3, dtype=L.bool), L.ones(2, dtype=L.bool)),
}


@pytest.mark.parametrize("name", BROADCAST_FIRST)
def test_broadcast_error_before_missing_kernel(name):
    t, e = outcome(torch, BROADCAST_FIRST[name]), outcome(ember, BROADCAST_FIRST[name])
    assert t[0] == "RuntimeError", t
    assert e == t


def test_parser_keeps_the_function_and_its_signature():
    import inspect
    assert ember.select.__name__ == "select"
    assert inspect.signature(ember.Tensor.select) == inspect.signature(
        ember.Tensor.select.__wrapped__)
    assert ember.Tensor.add.__ember_parser__.name == "add"


# Activations whose torch CPU kernels have floating loops only: an integer, bool or complex
# input is torch's NotImplementedError naming the kernel, not a computed result.
FLOATING_ONLY = ["elu", "celu", "selu", "leaky_relu", "rrelu", "hardsigmoid", "hardswish",
                 "hardshrink", "softshrink", "softplus", "logsigmoid", "mish", "silu", "glu"]


@pytest.mark.parametrize("name", FLOATING_ONLY)
def test_floating_only_activations_refuse_other_dtypes(name):
    for dtype in ("bool", "uint8", "int32", "int64", "complex64", "float16", "float64"):
        def call(L, dtype=dtype):
            return getattr(L.nn.functional, name)(L.ones(2, 4, dtype=getattr(L, dtype)))
        t, e = outcome(torch, call), outcome(ember, call)
        assert e[0] == t[0], (dtype, t, e)
        if t[0] == "NotImplementedError":
            assert e == t


# index_* ops: torch wraps the dim (IndexError) and checks index_copy's source rank before it
# looks at the index's dtype.
CHECK_ORDER = {
    "index_copy dim first": lambda L: L.index_copy(
        L.ones((), dtype=L.bfloat16), -4, L.ones(3, dtype=L.bfloat16), L.ones(0, 3)),
    "index_copy rank before index dtype": lambda L: L.index_copy(
        L.ones(2, 3, 4), 0, L.ones((), dtype=L.complex128), L.ones(4, dtype=L.complex128)),
    "index_select dim first": lambda L: L.index_select(L.ones(3), 1, L.ones(2, 1, 3)),
    "index_add dim first": lambda L: L.index_add(L.ones(2, 3), 3, L.ones((), dtype=L.uint8),
                                                 L.ones(1)),
    "index_copy int32 index": lambda L: L.index_copy(L.ones(3), 0, L.ones(2, dtype=L.int32),
                                                     L.ones(2)),
    "gather dim first": lambda L: L.gather(L.ones(4), -4, L.ones(0, 3)),
    "gather dim before ranks": lambda L: L.gather(L.ones(()), -2,
                                                  L.ones(3, 3, dtype=L.int64)),
    "scatter dim first": lambda L: L.ones(2, 3, 4).scatter(3, L.ones(1, 3), value=1.0),
    "scatter_add dim first": lambda L: L.ones(2, 3).scatter_add(3, L.ones(2, 1, 3),
                                                                L.ones(())),
}


@pytest.mark.parametrize("name", CHECK_ORDER)
def test_index_ops_check_order(name):
    t, e = outcome(torch, CHECK_ORDER[name]), outcome(ember, CHECK_ORDER[name])
    assert t[0] != "ok" and e == t


# nn.functional's Python functions that call a method of their input: a non-tensor is
# PyTorch's AttributeError ('str' object has no attribute 'tanh').
METHOD_CALLERS = {
    "tanh": lambda L: L.nn.functional.tanh("mean"),
    "sigmoid": lambda L: L.nn.functional.sigmoid(1.5),
    "softsign": lambda L: L.nn.functional.softsign(-2.5),
    "tanhshrink": lambda L: L.nn.functional.tanhshrink(np.int32(3)),
    "log_softmax": lambda L: L.nn.functional.log_softmax(True, dim=0),
    "softmax numpy": lambda L: L.nn.functional.softmax(np.int32(3), dim=1),
    "softmax bool dim": lambda L: L.nn.functional.softmax(L.ones(3, 3), dim=False),
    "softmax dtype": lambda L: L.nn.functional.softmax(L.ones(2, 3, dtype=L.int32), 1,
                                                       dtype=L.float64),
    "log_softmax method dtype": lambda L: L.ones(2, 3).log_softmax(0, L.float64),
}


@pytest.mark.parametrize("name", METHOD_CALLERS)
def test_functional_method_callers(name):
    assert outcome(ember, METHOD_CALLERS[name]) == outcome(torch, METHOD_CALLERS[name])


# Complex inputs torch's CPU sorts and nan-reductions refuse (after checking the dim).
COMPLEX_REFUSED = {
    "sort": lambda L: L.sort(L.ones(3, dtype=L.complex64)),
    "argsort stable": lambda L: L.argsort(L.ones(3, dtype=L.complex64), stable=True),
    "msort": lambda L: L.msort(L.ones(3, dtype=L.complex128)),
    "sort bad dim first": lambda L: L.sort(L.ones(3, dtype=L.complex64), 5),
    "argsort 0-d bad dim": lambda L: L.argsort(L.ones(()), 3),
    "nansum": lambda L: L.nansum(L.ones(3, dtype=L.complex64)),
    "nansum bad dim first": lambda L: L.nansum(L.ones(3, dtype=L.complex64), 5),
    "nanmean": lambda L: L.nanmean(L.ones(2, 3, dtype=L.complex64), dim=(0,)),
    "argmin": lambda L: L.argmin(L.ones(4, dtype=L.complex128)),
    "argmax complex before dim": lambda L: L.argmax(L.ones(1, 3, dtype=L.complex64), -3),
}


@pytest.mark.parametrize("name", COMPLEX_REFUSED)
def test_complex_sorts_and_nan_reductions_refused(name):
    t, e = outcome(torch, COMPLEX_REFUSED[name]), outcome(ember, COMPLEX_REFUSED[name])
    assert t[0] != "ok" and e == t


# Errors torch raises in its own words where NumPy would raise another error or compute.
OWN_WORDS = {
    "repeat_interleave float counts": lambda L: L.repeat_interleave(L.ones(3)),
    "repeat_interleave 0-d counts": lambda L: L.repeat_interleave(L.ones((), dtype=L.int64)),
    "repeat_interleave 2-D uint8 counts": lambda L: L.repeat_interleave(
        L.ones(2, 2, dtype=L.uint8)),
    "repeat_interleave int32 counts": lambda L: L.repeat_interleave(
        L.tensor([1, 0, 2], dtype=L.int32)),
    "hstack empty": lambda L: L.hstack([]),
    "vstack empty": lambda L: L.vstack([]),
    "dstack empty": lambda L: L.dstack([]),
    "column_stack empty": lambda L: L.column_stack([]),
    "linear 0-d weight": lambda L: L.nn.functional.linear(L.ones(2, 3), L.ones(())),
    "linear 0-d input": lambda L: L.nn.functional.linear(L.ones(()), L.ones(3)),
    "record_stream of a non-stream": lambda L: L.ones(2).record_stream(1),
    "softmax of an empty complex tensor": lambda L: L.softmax(
        L.ones(0, 3, dtype=L.complex64), 1),
    "log_softmax of an empty int tensor": lambda L: L.log_softmax(
        L.ones(0, 3, dtype=L.int32), 1),
    "softmax of a complex tensor": lambda L: L.softmax(L.ones(2, 3, dtype=L.complex64), 1),
}


@pytest.mark.parametrize("name", OWN_WORDS)
def test_errors_in_torchs_words(name):
    assert outcome(ember, OWN_WORDS[name]) == outcome(torch, OWN_WORDS[name])


def test_record_stream_of_a_cpu_stream_has_no_kernel():
    # (ember words the missing kernel itself; the exception type is torch's)
    def call(L):
        return L.ones(2).record_stream(L.Stream("cpu"))
    assert outcome(ember, call)[0] == outcome(torch, call)[0] == "NotImplementedError"
