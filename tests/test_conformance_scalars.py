"""Python and NumPy scalars in every position PyTorch takes a Number, compared with real torch
on the same inputs: the result's dtype, shape and values, or the exception's type.

PyTorch reads NumPy scalars by their C type (integers as int, complex128 as complex, the rest
through float(): np.bool_ is 1.0, np.complex64 its real part); ember/_scalars.py does the
same once for every op."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

PYTHON_NUMBERS = [3, -2.5, True, False, 1 + 2j]
NUMPY_NUMBERS = [np.bool_(True), np.int8(-3), np.uint8(3), np.int16(3), np.int32(-3),
                 np.int64(3), np.uint16(3), np.uint32(3), np.uint64(3), np.float16(1.5),
                 np.float32(-2.5), np.float64(1.5), np.longdouble(2.5), np.complex64(1 + 1j),
                 np.complex128(1 - 2j)]
NUMBERS = PYTHON_NUMBERS + NUMPY_NUMBERS


def outcome(lib, fn):
    """What `fn(lib)` gives: ("T", dtype name, shape, values) or ("E", exception type)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy's ComplexWarning for np.complex64, on both
        try:
            r = fn(lib)
        except Exception as exc:
            return ("E", type(exc).__name__)
    if not isinstance(r, lib.Tensor):
        return ("V", r)
    values = r.detach().to(lib.complex128).numpy() if r.dtype != lib.bool else r.numpy()
    return ("T", str(r.dtype).split(".")[-1], tuple(r.shape), values)


def agree(t, e):
    if t[0] != "T" or e[0] != "T":
        return t == e
    return t[1:3] == e[1:3] and np.allclose(t[3], e[3], rtol=1e-3, equal_nan=True)


def mismatches(cases):
    bad = []
    for name, fn in cases:
        t, e = outcome(torch, fn), outcome(ember, fn)
        if not agree(t, e):
            bad.append(f"{name}: torch {t[:3]} ember {e[:3]}")
    return bad


# ---------------------------------------------------------------------- function forms
# PyTorch's parser takes numbers for both operands of these (python_arg_parser.cpp's
# should_allow_numbers_as_tensors): two numbers give a 0-d tensor.
NUMBERS_AS_TENSORS = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "divide",
                      "multiply", "subtract"]


@pytest.mark.parametrize("name", NUMBERS_AS_TENSORS)
def test_function_forms_take_two_numbers(name):
    cases = [(f"{name}({a!r}, {b!r})", lambda L, a=a, b=b: getattr(L, name)(a, b))
             for a in NUMBERS for b in NUMBERS]
    assert mismatches(cases) == []


def test_the_issue_examples():
    assert repr(ember.add(1.0, 2)) == "tensor(3.)"
    assert ember.add(np.float32(1), 2).dtype is ember.float32
    assert ember.mul(np.float64(2.), 3).dtype is ember.float32
    assert ember.sub(np.int64(5), 2).dtype is ember.int64
    r = ember.floor_divide(np.float32(3), np.float32(2))
    assert r.dtype is ember.float32 and r.item() == 1.0


@pytest.mark.parametrize("call", [
    lambda L: L.add(1, "a"), lambda L: L.add("a", 1), lambda L: L.mul(None, 2),
    lambda L: L.remainder(1, 2), lambda L: L.eq(1, 2), lambda L: L.add(L.ones(1), "a"),
    lambda L: L.sub(True, True), lambda L: L.sub(True, 1), lambda L: L.floor_divide(True, True),
])
def test_function_forms_reject_as_torch(call):
    t, e = outcome(torch, call), outcome(ember, call)
    assert t[0] == "E" and t == e


def test_not_a_tensor_message_names_numpy_types():
    with pytest.raises(TypeError) as t_exc:
        torch.add(np.str_("a"), 1)
    with pytest.raises(TypeError) as e_exc:
        ember.add(np.str_("a"), 1)
    assert str(e_exc.value) == str(t_exc.value)


# ---------------------------------------------------------------------- Number positions
def T(L, dtype, shape=(2, 3)):
    values = (np.arange(6).reshape(shape) % 4 - 1).tolist()
    return L.tensor(values, dtype=getattr(L, dtype))


# position -> call taking (module, dtype name, scalar)
POSITIONS = {
    "add(t, s)": lambda L, d, s: L.add(T(L, d), s),
    "add(s, t)": lambda L, d, s: L.add(s, T(L, d)),
    "t.sub(s)": lambda L, d, s: T(L, d).sub(s),
    "mul(s, t)": lambda L, d, s: L.mul(s, T(L, d)),
    "div(t, s)": lambda L, d, s: L.div(T(L, d), s),
    "div(t, s, floor)": lambda L, d, s: L.div(T(L, d), s, rounding_mode="floor"),
    "t + s": lambda L, d, s: T(L, d) + s,
    "s + t": lambda L, d, s: s + T(L, d),
    "s - t": lambda L, d, s: s - T(L, d),
    "t - s": lambda L, d, s: T(L, d) - s,
    "s * t": lambda L, d, s: s * T(L, d),
    "s / t": lambda L, d, s: s / T(L, d),
    "t // s": lambda L, d, s: T(L, d) // s,
    "s % t": lambda L, d, s: s % T(L, d),
    "t ** s": lambda L, d, s: T(L, d) ** s,
    "s ** t": lambda L, d, s: s ** T(L, d),
    "pow(s, t)": lambda L, d, s: L.pow(s, T(L, d)),
    "remainder(t, s)": lambda L, d, s: L.remainder(T(L, d), s),
    "fmod(t, s)": lambda L, d, s: L.fmod(T(L, d), s),
    "eq(t, s)": lambda L, d, s: L.eq(T(L, d), s),
    "lt(t, s)": lambda L, d, s: L.lt(T(L, d), s),
    "s < t": lambda L, d, s: s < T(L, d),
    "s == t": lambda L, d, s: s == T(L, d),
    "maximum(t, s)": lambda L, d, s: L.maximum(T(L, d), s),
    "copysign(t, s)": lambda L, d, s: L.copysign(T(L, d), s),
    "xlogy(s, t)": lambda L, d, s: L.xlogy(s, T(L, d)),
    "add(t, t, alpha=s)": lambda L, d, s: L.add(T(L, d), T(L, d), alpha=s),
    "sub(t, 1, alpha=s)": lambda L, d, s: L.sub(T(L, d), 1, alpha=s),
    "addcmul(value=s)": lambda L, d, s: L.addcmul(T(L, d), T(L, d), T(L, d), value=s),
    "where(c, t, s)": lambda L, d, s: L.where(T(L, "bool"), T(L, d), s),
    "where(c, s, t)": lambda L, d, s: L.where(T(L, "bool"), s, T(L, d)),
    "clamp(t, s)": lambda L, d, s: L.clamp(T(L, d), s),
    "clamp(t, max=s)": lambda L, d, s: L.clamp(T(L, d), max=s),
    "t.clamp_(s, s)": lambda L, d, s: T(L, d).clamp_(s, s),
    "t.fill_(s)": lambda L, d, s: T(L, d).fill_(s),
    "full(s)": lambda L, d, s: L.full((2,), s),
    "full(s, dtype)": lambda L, d, s: L.full((2,), s, dtype=getattr(L, d)),
    "index_fill(s)": lambda L, d, s: T(L, d).index_fill(0, L.tensor([0]), s),
    "t[0] = s": lambda L, d, s: T(L, d).__setitem__(0, s),
    "t += s": lambda L, d, s: T(L, d).__iadd__(s),
    "t.mul_(s)": lambda L, d, s: T(L, d).mul_(s),
    "arange(s)": lambda L, d, s: L.arange(s),
    "linspace(0, s)": lambda L, d, s: L.linspace(0, s, 3),
    "std(correction=s)": lambda L, d, s: T(L, "float64").std(correction=s),
    "norm(p=s)": lambda L, d, s: T(L, "float32").norm(p=s),
    "hardtanh(t, -s, s)": lambda L, d, s: L.nn.functional.hardtanh(T(L, d), -abs(s), abs(s)),
}

# Real scalars everywhere; complex ones only where a complex value is a legal Number (the
# complex-into-real-dtype overflow checks are op-level and outside this file).
REAL_NUMBERS = [s for s in NUMBERS if not isinstance(s, (complex, np.complexfloating))]
COMPLEX_OK = {"add(t, s)", "add(s, t)", "t.sub(s)", "mul(s, t)", "div(t, s)", "t + s", "s + t",
              "s - t", "t - s", "s * t", "t ** s", "eq(t, s)", "s == t", "lt(t, s)",
              "s < t", "remainder(t, s)", "fmod(t, s)", "copysign(t, s)", "xlogy(s, t)",
              "where(c, t, s)", "full(s)", "linspace(0, s)"}
# Positions whose integer reading of a bound makes no sense for a negative scalar: hardtanh
# takes |s|; clamp_ on bool has no kernel in PyTorch (its NotImplementedError is compared).


@pytest.mark.parametrize("dtype", ["uint8", "int64", "float32", "float64"])
@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_numbers_in_number_positions(position, dtype):
    call = POSITIONS[position]
    scalars = NUMBERS if position in COMPLEX_OK else REAL_NUMBERS
    cases = [(f"{position} [{dtype}, {s!r}]", lambda L, s=s: call(L, dtype, s))
             for s in scalars]
    assert mismatches(cases) == []


def test_numpy_scalars_read_as_pytorch_reads_them():
    # Independent of torch: the documented reading (PyTorch's python_arg_parser).
    from ember._scalars import number
    assert type(number(np.bool_(True))) is float and number(np.bool_(True)) == 1.0
    assert type(number(np.uint64(7))) is int
    assert type(number(np.float16(1.5))) is float
    assert number(np.complex128(1 - 2j)) == 1 - 2j
    with pytest.warns(np.exceptions.ComplexWarning):
        assert number(np.complex64(3 + 1j)) == 3.0
    s = np.str_("x")
    assert number(s) is s
