"""Pointwise ops (ops/unary.py, rounding.py, pointwise.py, comparison.py) against real
PyTorch: dtype promotion, Python operators, in-place cast errors, nan/inf handling, integer
wraparound, error types and messages, grad_fn names and subgradient conventions."""
import warnings

import numpy as np
import pytest

import ember

nan, inf = float("nan"), float("inf")


def _evaluate(m, expr):
    """Run `expr` with module `m` bound to `m`: (dtype name, values) or the exception."""
    env = {"m": m, "nan": nan, "inf": inf,
           "b": m.tensor([True, False]), "i": m.tensor([1, 2, 3]),
           "u": m.tensor([200, 100], dtype=m.uint8), "f": m.tensor([1.0, 2.5]),
           "h": m.tensor([1.0, 300.0], dtype=m.float16)}
    try:
        r = eval(expr, env)
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return exc
    if isinstance(r, m.Tensor):
        r = r.detach()
        values = (r.float() if r.dtype == m.bfloat16 else r).tolist()
        return str(r.dtype).split(".")[-1], values
    return r


def _same(expected, actual, message=False):
    if isinstance(expected, Exception):
        assert isinstance(actual, Exception), f"expected {expected!r}, got {actual!r}"
        assert type(actual).__name__ == type(expected).__name__, (expected, actual)
        if message:
            assert str(actual) == str(expected)
        return
    assert not isinstance(actual, Exception), f"{actual!r} (torch gave {expected!r})"
    if isinstance(expected, tuple):
        assert actual[0] == expected[0], f"dtype {actual[0]} != {expected[0]}"
        np.testing.assert_allclose(np.asarray(actual[1], dtype=complex),
                                   np.asarray(expected[1], dtype=complex), rtol=1e-6,
                                   atol=1e-30, equal_nan=True)
    else:
        assert actual == expected


PROMOTION = [
    "u + m.tensor([1], dtype=m.int8)", "m.maximum(u, m.tensor([-1], dtype=m.int8))",
    "u % m.tensor([7], dtype=m.int8)", "m.pow(u, m.tensor([2], dtype=m.int8))",
    "i ** 2.5", "i % 1.5", "m.remainder(i, 1.5)", "i < 1.5", "m.atan2(i, i)", "m.xlogy(i, 2)",
    "m.copysign(i, -1)", "b & b", "b | 1", "b ** 2", "b ** 2.0", "2 ** b", "m.square(b)",
    "b == 1", "m.where(b, 1, 2)", "m.where(b, 1.0, 2)", "m.where(b, i[:2], 2.5)",
    "m.where(b, u, i[:2])", "m.where(b, f, m.tensor(1.0, dtype=m.float64))",
    "f ** m.tensor(2, dtype=m.float64)", "m.tensor(2) ** m.tensor([1.5])",
    "m.tensor([2], dtype=m.int32) ** m.tensor(3)", "m.maximum(i, f[:1])",
    "m.atan2(i, m.tensor(1.0, dtype=m.float64))", "m.clamp(i, 0.5)", "m.clamp(b, 0, 1)",
    "m.clamp(i, min=1, max=2)", "m.float_power(i, 2)", "m.float_power(2, i)",
    "m.exp(i)", "m.sqrt(b)", "m.sin(u)", "m.exp(h)", "m.abs(m.tensor([3 + 4j]))",
    "m.angle(m.tensor([-1, 0, 1]))", "m.logical_and(i, f[:1], out=m.empty(3))",
    "m.sin(f, out=m.empty(2, dtype=m.float64))", "m.bitwise_and(3, m.tensor([1]))",
    "i & True", "m.tensor([0.1], dtype=m.float16) == 0.1",
    "m.tensor([0.1], dtype=m.bfloat16) == 0.1",
    "m.tensor([0.1], dtype=m.float16) == m.tensor(0.1)",
]

OPERATORS = [
    "i ** 2", "2 ** i", "2.5 ** i", "i % 2", "-7 % m.tensor([3])", "m.tensor([-7]) % 3",
    "m.tensor([-7.5]) % 2", "~b", "~i", "~m.tensor(5, dtype=m.uint8)", "i & 6", "6 & i",
    "i | 4", "4 | i", "i ^ 1", "1 ^ i", "i << 2", "1 << i", "m.tensor([-8]) >> 1",
    "64 >> i", "i == 2", "2 == i", "i != 2", "i < 2", "2 < i", "i <= 2", "i > 2", "i >= 2",
    "abs(m.tensor([-1, 2]))", "abs(m.tensor([-1.5]))", "f == None", "f != None",
    "f == 'a'", "f == [1.0, 2.5]", "+f", "f.__rpow__(2)", "f.__rmod__(7)",
]

INPLACE = [
    "i.exp_()", "m.tensor([True]).exp_()", "i.sin_()", "i.pow_(0.5)", "i.pow_(2)",
    "i.float_power_(2)", "f.float_power_(2)", "i.double().float_power_(2)",
    "m.tensor([1.0]).lt_(m.tensor([2.0]))", "i.eq_(1.0)",
    "f.logical_and_(m.tensor([0.0, 1.0]))", "i.bitwise_and_(3)", "b.bitwise_and_(3)",
    "i.clamp_(0, 2)", "i.abs_()", "f.sigmoid_()", "f.round_(decimals=1)",
    "m.sin(i, out=m.empty(3, dtype=m.int64))", "f.clamp_(m.tensor([2.0]))",
    "i.remainder_(2)", "i.bitwise_left_shift_(1)", "f.nan_to_num_()",
]


def _inplace_operators(m):
    out = []
    x = m.tensor([1, 2, 3])
    x **= 2
    x %= 3
    x &= 6
    x |= 1
    x ^= 2
    x <<= 2
    x >>= 1
    out.append(x.tolist())
    y = m.tensor([1.5, 2.0])
    y **= 2
    y %= 1.5
    out.append(y.tolist())
    return out


NAN_INF = [
    "m.maximum(m.tensor([nan, 1.0]), m.tensor([1.0, nan]))",
    "m.minimum(m.tensor([nan, 1.0]), m.tensor([1.0, nan]))",
    "m.fmax(m.tensor([nan, 1.0, nan]), m.tensor([1.0, nan, nan]))",
    "m.fmin(m.tensor([nan, 1.0, nan]), m.tensor([1.0, nan, nan]))",
    "m.clamp(m.tensor([nan, 1.0]), 0, 2)", "m.clamp(m.tensor([1.0, 5.0]), min=2, max=1)",
    "m.relu(m.tensor([nan, -1.0]))", "m.sign(m.tensor([nan, -0.0, -2.0, 3.0]))",
    "m.sgn(m.tensor([nan]))", "m.sgn(m.tensor([3 + 4j, 0j]))",
    "m.nan_to_num(m.tensor([nan, inf, -inf]))",
    "m.nan_to_num(m.tensor([nan, inf, -inf], dtype=m.float16))",
    "m.nan_to_num(m.tensor([nan, inf, -inf], dtype=m.bfloat16))",
    "m.nan_to_num(m.tensor([nan, inf, -inf]), 1.0, 2.0, -3.0)", "m.nan_to_num(i, nan=1.5)",
    "m.logaddexp(m.tensor([-1e30, 1e30, inf, -inf]), m.tensor([-1e30, 1e30, inf, -inf]))",
    "m.sigmoid(m.tensor([-100.0, 100.0, -1000.0]))", "m.exp(m.tensor([12.0], dtype=m.float16))",
    "h ** 2", "m.expm1(m.tensor([1e-10]))", "m.log1p(m.tensor([1e-10]))",
    "m.log(m.tensor([0.0, -1.0]))", "m.rsqrt(m.tensor([0.0, -1.0]))",
    "m.digamma(m.tensor([0.0, -1.0, -0.0]))", "m.lgamma(m.tensor([0.0, -1.0, -0.5]))",
    "m.erfinv(m.tensor([1.0, -1.0, 2.0]))", "m.frac(m.tensor([-1.5, 2.25, inf]))",
    "m.xlogy(m.tensor([0.0, 0.0]), m.tensor([nan, 0.0]))",
    "m.isclose(m.tensor([1.0, inf, nan, -inf]), m.tensor([1.0, inf, nan, inf]))",
    "m.isclose(m.tensor([nan]), m.tensor([nan]), equal_nan=True)",
    "m.equal(m.tensor([nan]), m.tensor([nan]))", "m.signbit(m.tensor([-0.0, 0.0]))",
    "m.angle(m.tensor([-1.0, 0.0, -0.0, nan]))", "m.sinc(m.tensor([0.0, 1.0]))",
    "m.remainder(m.tensor([1.0, 2.0]), m.tensor([inf, -inf]))", "f % 0", "m.fmod(f, 0.0)",
    "m.heaviside(m.tensor([-1.0, 0.0, 2.0]), m.tensor([0.5, 0.7, 0.1]))",
    "m.logit(m.tensor([0.0, 1.0, -1.0]), eps=0.1)", "m.logit(m.tensor([0.0, 1.0, -1.0]))",
]

INTEGERS = [
    "u + 100", "u == 200", "u == -56", "u > -1", "m.tensor([1], dtype=m.int8) + m.tensor(1000)",
    "m.abs(m.tensor([-128], dtype=m.int8))", "m.tensor(2) ** m.tensor([62, 63, 64])",
    "m.tensor([2, -1, -1, 1, 0, -2]) ** m.tensor([-1, -1, -2, -3, -1, -1])",
    "m.tensor([3], dtype=m.uint8) ** m.tensor([-1], dtype=m.int8)", "m.pow(2, m.tensor([-1, 1]))",
    "i ** -1", "i % 0", "i.remainder(m.tensor([0, 1, 1]))", "m.fmod(i, 0)", "m.fmod(i, -2)",
    "m.tensor([1]) << 64", "m.tensor([1]) << 63", "m.tensor([1], dtype=m.uint8) << 9",
    "m.tensor([1], dtype=m.int8) << -1", "m.tensor([100]) >> 70", "m.tensor([-100]) >> 70",
    "m.tensor([-100]) >> -1", "m.tensor([5], dtype=m.uint8).clamp(min=-1)",
    "m.floor(i)", "m.round(i)", "m.sign(u)", "m.relu(m.tensor([-1, 2], dtype=m.int8))",
]

ERRORS = [
    "m.exp(2.0)", "m.remainder(2, 3)", "m.fmod(2, i)", "m.eq(2, i)", "m.abs(b)", "m.floor(b)",
    "m.frac(i)", "m.round(i, decimals=1)", "m.relu(b)", "m.positive(b)", "m.sign(m.tensor([1j]))",
    "m.erf(m.tensor([1j]))", "m.logit(m.tensor([1j]))", "m.ceil(m.tensor([1j]))",
    "m.deg2rad(m.tensor([1j]))", "m.isneginf(m.tensor([1j]))", "m.signbit(m.tensor([1j]))",
    "m.maximum(m.tensor([1j]), m.tensor([1j]))", "m.fmax(m.tensor([1j]), m.tensor([1j]))",
    "m.maximum(i, 1)", "m.atan2(i, 2)", "m.hypot(i, i)", "m.logaddexp(i, i)",
    "m.logical_and(f, 1)", "m.heaviside(f, 1.0)", "m.heaviside(i, f)", "m.lerp(i, i, 0.5)",
    "m.lerp(f, f.double(), 0.5)", "m.lerp(f, f, m.tensor([0.5, 0.5], dtype=m.float64))",
    "m.where(i, 1, 2)", "m.clamp(i)", "m.clamp(f, m.tensor([2.0]), 3.0)",
    "m.isclose(i, f[:1])", "m.allclose(f, f.double())", "m.isclose(f, f, rtol=-1)",
    "m.isclose(f, f, atol=-1)", "~f", "f & 1", "f << 1", "m.bitwise_not(f)", "b ** b",
    "m.remainder(b, b)", "f == m.tensor([1.0, 2.0, 3.0])", "m.tensor([1.0]).imag",
    "m.polygamma(-1, f)", "m.tensor([3], dtype=m.uint8) ** 300",
    "m.tensor([3], dtype=m.int32) ** (2 ** 40)", "i ** (2 ** 70)",
]
MESSAGE_CHECKED = set(ERRORS) - {"m.clamp(f, m.tensor([2.0]), 3.0)", "m.remainder(2, 3)",
                                 "m.fmod(2, i)", "m.eq(2, i)", "m.polygamma(-1, f)"}


@pytest.mark.parametrize("expr", PROMOTION + OPERATORS + INPLACE + NAN_INF + INTEGERS)
def test_matches_torch(expr, torch_mod):
    _same(_evaluate(torch_mod, expr), _evaluate(ember, expr))


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr, torch_mod):
    _same(_evaluate(torch_mod, expr), _evaluate(ember, expr), expr in MESSAGE_CHECKED)


def test_inplace_operators(torch_mod):
    assert _inplace_operators(ember) == _inplace_operators(torch_mod)


def test_inplace_cast_error_message():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ember.tensor([1, 2]).exp_()


def test_uint8_wraparound():
    assert (ember.tensor([200], dtype=ember.uint8) + 100).tolist() == [44]


def test_tensor_stays_hashable():
    a, b = ember.tensor([1.0]), ember.tensor([1.0])
    assert len({a, b}) == 2 and {a: 1}[a] == 1
    assert (a == b).dtype is ember.bool


def test_no_numpy_warnings():
    """PyTorch returns inf/nan silently; NumPy's floating-point warnings must not leak."""
    x = ember.tensor([0.0, -1.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (ember.log, ember.sqrt, ember.exp, ember.reciprocal, ember.rsqrt,
                   ember.lgamma, ember.digamma, ember.log1p, ember.sigmoid, ember.erfinv):
            fn(x)
        ember.exp(ember.tensor([12.0], dtype=ember.float16))
        x % 0.0
        ember.fmod(x, 0.0)
        ember.xlogy(x, x)
        ember.isclose(ember.tensor([inf]), ember.tensor([inf]))


def test_where_single_argument_is_nonzero(torch_mod):
    c = [[True, False], [False, True]]
    expected = torch_mod.where(torch_mod.tensor(c))
    actual = ember.where(ember.tensor(c))
    assert [a.tolist() for a in actual] == [e.tolist() for e in expected]


def test_real_imag_are_attributes(torch_mod):
    for m in (ember, torch_mod):
        z = m.tensor([1 + 2j, 3 - 4j])
        assert z.real.tolist() == [1.0, 3.0] and z.imag.tolist() == [2.0, -4.0]
        assert str(z.real.dtype).endswith("float32")


# ---------------------------------------------------------------------- gradients
X = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]
Y = [0.0, 0.0, 1.0, 1.0, 3.0, 1.0]
Z = [1.0, 0.0, 0.0, 2.0, 1.0, 3.0]

GRADS = {
    "abs": "x.abs()", "relu": "x.relu()", "clamp": "x.clamp(0, 1)", "clamp_min": "x.clamp(min=0)",
    "clamp_min_fn": "x.clamp_min(0)", "clamp_max": "x.clamp(max=1)",
    "clamp_tensor": "x.clamp(y, z)", "clamp_tensor_min": "x.clamp(min=y)",
    "clamp_tensor_max": "x.clamp(max=z)", "clamp_min_tensor": "x.clamp_min(y)",
    "clamp_max_tensor": "x.clamp_max(z)", "clamp_nan": "m.tensor([nan, 1.0]) + x[:2].clamp(0, 2)",
    "maximum": "m.maximum(x, y)", "minimum": "m.minimum(x, y)", "fmax": "m.fmax(x, y)",
    "fmin": "m.fmin(x, y)", "square": "x.square()", "pow_scalar": "x ** 2", "pow_zero": "x ** 0",
    "pow_tensor": "x ** y", "rpow": "2 ** x", "rpow_zero": "0 ** x", "pow_half": "x ** 0.5",
    "float_power": "m.float_power(x, 2)", "float_power_tensor": "m.float_power(x, y)",
    "sign": "x.sign()", "round": "x.round()", "round_decimals": "x.round(decimals=1)",
    "frac": "x.frac()", "trunc": "x.trunc()", "fix": "m.fix(x)", "floor": "x.floor()",
    "where": "m.where(x > 0, x, y)", "where_scalar": "m.where(x > 0, x, 2.0)",
    "lerp": "m.lerp(x, y, 0.3)", "lerp_tensor": "m.lerp(x, y, z)", "hypot": "m.hypot(x, y + 1)",
    "xlogy": "m.xlogy(x, y)", "xlogy_scalar_other": "m.xlogy(x, 2.0)",
    "xlogy_scalar_self": "m.xlogy(2.0, y)", "copysign": "m.copysign(x, y - 0.5)",
    "remainder": "m.remainder(x, y + 1)", "fmod": "m.fmod(x, y + 1)",
    "remainder_scalar": "m.remainder(x, 2)", "atan2": "m.atan2(x, y)",
    "logaddexp": "m.logaddexp(x, y)", "logaddexp2": "m.logaddexp2(x, y)",
    "nan_to_num": "(x.log()).nan_to_num()", "sinc": "x.sinc()", "deg2rad": "x.deg2rad()",
    "logit": "x.logit()", "logit_eps": "x.logit(0.1)", "sigmoid": "x.sigmoid()",
    "angle": "x.angle()", "exp": "x.exp()", "exp2": "x.exp2()", "expm1": "x.expm1()",
    "log1p": "x.log1p()", "sqrt": "x.sqrt()", "rsqrt": "x.rsqrt()",
    "reciprocal": "x.reciprocal()", "tan": "x.tan()", "tanh": "x.tanh()",
    "erfinv": "(x / 4).erfinv()", "lgamma": "(x + 1.5).lgamma()",
    "digamma": "(x + 1.5).digamma()", "polygamma": "m.polygamma(1, x + 1.5)",
    "acosh": "(x + 3).acosh()", "atanh": "(x / 4).atanh()",
}


def _grads(m, expr):
    x = m.tensor(X, dtype=m.float64, requires_grad=True)
    y = m.tensor(Y, dtype=m.float64, requires_grad=True)
    z = m.tensor(Z, dtype=m.float64, requires_grad=True)
    r = eval(expr, {"m": m, "x": x, "y": y, "z": z, "nan": nan})
    weights = m.arange(1.0, r.numel() + 1, dtype=m.float64).reshape(r.shape)
    gs = m.autograd.grad((r * weights).sum(), [x, y, z], allow_unused=True)
    name = r.grad_fn.name() if r.grad_fn is not None else None
    return name, r.tolist(), [None if g is None else g.tolist() for g in gs]


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_torch(name, torch_mod):
    """Values, grad_fn names and subgradients at kinks/ties/boundaries equal PyTorch's."""
    t_name, t_out, t_grads = _grads(torch_mod, GRADS[name])
    e_name, e_out, e_grads = _grads(ember, GRADS[name])
    assert e_name == t_name
    np.testing.assert_allclose(e_out, t_out, rtol=1e-9, equal_nan=True)
    for e, t in zip(e_grads, t_grads):
        if t is None or e is None:  # unused input: torch says None, a zero tensor is fine
            assert e is None or not np.any(e), (e, t)
            assert t is None or not np.any(t), (e, t)
            continue
        # rtol 1e-9: PyTorch's trigamma (digamma's gradient) is good to ~1e-10 only.
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-15, equal_nan=True)


def test_heaviside_has_no_derivative():
    x = ember.tensor([1.0, -1.0], requires_grad=True)
    r = ember.heaviside(x, ember.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        r.sum().backward()


def test_saved_output_modified_in_place_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_addcmul_addcdiv_errors_match_torch(torch_mod):
    cases = [("addcmul", lambda L: (L.ones(2), L.ones(3), L.ones(2))),
             ("addcmul", lambda L: (L.ones(3, 2), L.ones(2), L.ones(4, 1))),
             ("addcdiv", lambda L: (L.ones(2), L.ones(2, dtype=L.int64),
                                    L.ones(2, dtype=L.int64))),
             ("addcmul", lambda L: (L.ones(2), [1.0, 2.0], L.ones(2)))]
    for name, make in cases:
        errors = []
        for lib in (ember, torch_mod):
            with pytest.raises(Exception) as info:
                getattr(lib, name)(*make(lib))
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def test_inf_and_nan_results_are_silent_as_in_torch_and_numpy_keeps_its_warnings(torch_mod):
    """1 / 0, 0 * inf, log(-1): PyTorch gives inf/nan without a word; NumPy, which ember's
    kernels call, warns. The user's own NumPy code keeps its warnings."""
    import subprocess
    import sys
    code = ("import {lib} as t, numpy as np\n"
            "x = t.tensor([1.0, 0.0])\n"
            "r = [x / 0, t.floor_divide(x, 0), t.tensor([0.0]) * float('inf'),\n"
            "     t.log(t.tensor([-1.0])), t.tensor([float('inf')]) - float('inf')]\n"
            "print([v.tolist() for v in r])\n"
            "np.array([1.0]) / 0\n")
    runs = {lib: subprocess.run([sys.executable, "-c", code.format(lib=lib)],
                                capture_output=True, text=True, timeout=120)
            for lib in ("ember", "torch")}
    for run in runs.values():
        assert run.returncode == 0, run.stderr
    assert runs["ember"].stdout == runs["torch"].stdout
    for run in runs.values():   # only NumPy's own division warns, in both
        assert run.stderr.count("RuntimeWarning") == 1, run.stderr
        assert "<string>:6" in run.stderr
