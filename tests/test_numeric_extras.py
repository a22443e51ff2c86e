"""Numeric functions against real PyTorch: gcd/lcm, i0, frexp/ldexp, nextafter, diff,
isin, dist, renorm, cov/corrcoef, the trapezoid rules, vander, histogram, unravel_index.
Values, dtypes and shapes; gradients (and a second derivative) of the differentiable ones;
error types and messages."""
import warnings

import numpy as np
import pytest

import ember

nan, inf = float("nan"), float("inf")


def _env(m):
    return {"m": m, "nan": nan, "inf": inf,
            "i": m.tensor([[12, -18, 0, 7], [5, 9, -4, 16]]),
            "j": m.tensor([8, 27, 0, -14], dtype=m.int32),
            "f": m.tensor([[1.0, -2.0, 3.0, 0.5], [0.5, 0.0, -1.0, 2.0]]),
            "x": m.tensor([0.0, 1.0, 3.0, 3.5]), "h": m.tensor([0.5, -3.0, 0.0], dtype=m.half),
            "w": m.tensor([0.5, 1.0, 2.0, 1.0]), "fw": m.tensor([1, 2, 1, 3])}


def _plain(m, r):
    """A result as comparable data: (dtype, shape, values) per tensor, recursively."""
    if isinstance(r, m.Tensor):
        r = r.detach()
        values = (r.float() if r.dtype == m.bfloat16 else r).tolist()
        return str(r.dtype).split(".")[-1], tuple(r.shape), values
    if isinstance(r, tuple):
        return type(r).__name__, tuple(_plain(m, v) for v in r)
    return r


def _evaluate(m, expr):
    try:
        return _plain(m, eval(expr, _env(m)))
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return exc


def _close(expected, actual, rtol):
    if isinstance(expected, tuple) and len(expected) == 3 and isinstance(expected[0], str) \
            and isinstance(expected[1], tuple):
        assert actual[:2] == expected[:2], f"dtype/shape {actual[:2]} != {expected[:2]}"
        np.testing.assert_allclose(np.asarray(actual[2], dtype=complex),
                                   np.asarray(expected[2], dtype=complex), rtol=rtol,
                                   atol=1e-6 * rtol, equal_nan=True)
    elif isinstance(expected, tuple):
        assert len(actual) == len(expected) and actual[0] == expected[0]
        for e, a in zip(expected[1], actual[1]):
            _close(e, a, rtol)
    else:
        assert actual == expected


VALUES = [
    # gcd / lcm: promotion, broadcasting, zeros and signs, wraparound
    "m.gcd(i, j)", "m.lcm(i, j)", "m.gcd(i, m.tensor(3))", "m.gcd(j, i[:, :1])",
    "m.gcd(i.to(m.uint8), i.to(m.int8))", "m.lcm(m.tensor([200], dtype=m.uint8), "
    "m.tensor([3], dtype=m.uint8))", "m.gcd(m.tensor([True, False, True, True]), j)",
    "i.gcd(j)", "i.clone().gcd_(j)", "j.clone().lcm_(i[0])",
    # i0
    "m.i0(f)", "m.i0(i)", "m.i0(m.tensor([True]))", "m.i0(h)", "m.i0(f.double() * 30)",
    "m.i0(m.tensor([100.0]))", "f.i0()", "f.clone().i0_()",
    # frexp / ldexp / nextafter
    "m.frexp(f)", "m.frexp(h)", "m.frexp(f.double())", "m.frexp(f.bfloat16())",
    "m.frexp(m.tensor([8.0, inf, -inf, nan, -0.0, 1e-40]))", "f.frexp()",
    "m.frexp(m.tensor(3.0))", "m.ldexp(f, i)", "m.ldexp(i, i % 5)", "m.ldexp(f, f)",
    "m.ldexp(h, m.tensor([1, 2, 20]))", "m.ldexp(h, h)", "m.ldexp(h, m.tensor(2.0))",
    "m.ldexp(f, j.to(m.int8))", "m.ldexp(m.tensor([1e-30]), m.tensor([200]))",
    "m.ldexp(m.tensor([1e30]), m.tensor([-200.0]))",
    "m.ldexp(m.tensor([0.5], dtype=m.float64), m.tensor([1024]))",
    "m.ldexp(m.tensor([3.0], dtype=m.float64), m.tensor([-1075]))",
    "m.ldexp(m.tensor([1 + 1j]), m.tensor([2]))", "m.ldexp(f, m.tensor([[1], [2]]))",
    "f.ldexp(i)", "f.clone().ldexp_(i)", "h.clone().ldexp_(m.tensor([1, 2, 3]))",
    "m.nextafter(f, m.tensor([1.0]))", "m.nextafter(f, f.double())", "m.nextafter(h, -h)",
    "m.nextafter(h.bfloat16(), m.tensor([1.0], dtype=m.bfloat16))", "m.nextafter(f, i)",
    "m.nextafter(m.tensor([nan, 1.0, 0.0, -0.0, inf]), m.tensor([1.0, nan, -0.0, 0.0, inf]))",
    "m.nextafter(f, m.tensor(1.0, dtype=m.float64))", "f.clone().nextafter_(x)",
    # diff
    "m.diff(i)", "m.diff(i, n=2)", "m.diff(i, dim=0)", "m.diff(i, n=5)", "m.diff(i, n=0)",
    "m.diff(i, prepend=i[:, :1])", "m.diff(i, append=f)", "m.diff(i, 1, 0, f[:1], i[1:])",
    "m.diff(m.tensor([True, False, True]))", "m.diff(m.tensor([True, False, True]), n=2)",
    "m.diff(i.to(m.uint8))", "m.diff(i.to(m.int8), prepend=i)", "m.diff(m.empty(0))",
    "m.diff(m.tensor([1 + 2j, 3j]))", "m.diff(h)", "f.diff(dim=0)",
    # isin
    "m.isin(i, j)", "m.isin(i, 7)", "m.isin(7, i)", "m.isin(7.0, i)", "m.isin(i, 7.5)",
    "m.isin(f, m.tensor([3, 2]))", "m.isin(i, j.view(2, 2), invert=True)",
    "m.isin(i, m.tensor([7, 16]), assume_unique=True)", "m.isin(m.tensor([nan, 1.0]), nan)",
    "m.isin(i, m.empty(0))", "m.isin(m.empty(0, 3), i)", "m.isin(h, m.tensor([0.5]))",
    "m.isin(i.to(m.uint8), 260)", "m.isin(i.to(m.uint8), m.tensor([260]))",
    "m.isin(m.tensor([0.1]), 0.1)", "m.isin(m.tensor([0.1]), m.tensor([0.1], dtype=m.float64))",
    "m.isin(m.tensor([0.1]), m.tensor(0.1, dtype=m.float64))", "m.isin(m.tensor([-0.0]), 0.0)",
    "m.isin(h.bfloat16(), m.tensor([-3.0]))",
    # dist / renorm
    "m.dist(f, x)", "m.dist(f, x, 1)", "m.dist(f, x, 0)", "m.dist(f, x, inf)",
    "m.dist(f, x, -inf)", "m.dist(f, x, 3.5)", "m.dist(f, x, -1)", "m.dist(f, x.double())",
    "m.dist(f.half(), x)", "m.dist(f.half(), x.half())", "m.dist(f, m.tensor(2.0))",
    "m.dist(i, f)", "m.dist(m.tensor([1 + 1j]), m.tensor([2j]))", "f.dist(x, p=m.tensor(3.0))",
    "m.dist(m.empty(0), m.empty(0))",
    "m.renorm(f, 2, 0, 1.0)", "m.renorm(f, 1, 1, 2.0)", "m.renorm(f, inf, 0, 1.0)",
    "m.renorm(f, 2.5, -1, 1)", "m.renorm(f, 2, 0, 100.0)", "m.renorm(f.double(), 2, 0, 1.0)",
    "m.renorm(f.half(), 2, 0, 1.0)", "m.renorm(m.zeros(1, 2), 2, 0, 1.0)",
    "m.renorm(m.tensor([[1 + 1j, 2]]), 2, 0, 1.0)", "f.renorm(2, 0, m.tensor(1.0))",
    "f.clone().renorm_(2, 0, 1.0)",
    # cov / corrcoef
    "m.cov(f)", "m.cov(f, correction=0)", "m.cov(f, correction=2)", "m.cov(f[0])",
    "m.cov(i)", "m.cov(j)", "m.cov(f, fweights=fw)", "m.cov(f, aweights=w)",
    "m.cov(f, fweights=fw, aweights=w)", "m.cov(f, fweights=fw.int(), correction=3)",
    "m.cov(f.double(), aweights=w)", "m.cov(f.half())", "m.cov(m.tensor([[1 + 1j, 2j, 3.0]]))",
    "m.cov(m.empty(0, 3))", "m.cov(f, aweights=w[1:2] * 0 + w, correction=0)", "f.cov()",
    "m.corrcoef(f)", "m.corrcoef(f[0])", "m.corrcoef(i)", "m.corrcoef(m.tensor(3.0))",
    "m.corrcoef(m.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]))", "m.corrcoef(f.half())",
    "m.corrcoef(m.tensor([[1 + 1j, 2j, 3.0], [1.0, 2.0, 1j]]))", "f.corrcoef()",
    # trapezoid rules
    "m.trapezoid(f)", "m.trapezoid(f, x)", "m.trapezoid(f, dx=0.5)", "m.trapezoid(f, dim=0)",
    "m.trapezoid(i)", "m.trapezoid(i, dx=2)", "m.trapezoid(f, i[0])", "m.trapezoid(f, x=x)",
    "m.trapezoid(f, x.expand(2, 4))", "m.trapezoid(f, m.tensor([[0.0], [1.0]]), dim=0)",
    "m.trapezoid(f, m.tensor([0.0, 2.0]), dim=0)", "m.trapezoid(m.empty(2, 0))",
    "m.trapezoid(i[:, :0])", "m.trapezoid(f[:, :1])", "m.trapezoid(f.half(), x)",
    "m.trapezoid(f.half())", "m.trapezoid(f, x.double())", "m.trapezoid(f, dx=m.tensor(2.0))",
    "m.trapezoid(m.tensor([1 + 1j, 2]), dx=2)", "m.trapz(f)", "m.trapz(f, x)",
    "m.trapz(f, dx=2.0, dim=0)", "m.trapz(f, x=x, dim=-1)",
    "m.cumulative_trapezoid(f)", "m.cumulative_trapezoid(f, x)", "m.cumulative_trapezoid(i)",
    "m.cumulative_trapezoid(f, dx=0.5, dim=0)", "m.cumulative_trapezoid(f[:, :1])",
    "m.cumulative_trapezoid(m.empty(2, 0))", "m.cumulative_trapezoid(f, x.expand(2, 4))",
    "m.cumulative_trapezoid(i, dx=2)", "m.cumulative_trapezoid(i, i)",
    # vander
    "m.vander(x)", "m.vander(x, N=2)", "m.vander(x, 5, True)", "m.vander(x, N=0)",
    "m.vander(x, 1)", "m.vander(j)", "m.vander(m.tensor([True, False]))",
    "m.vander(j.to(m.uint8), 6)", "m.vander(m.empty(0))", "m.vander(m.empty(0), 2)",
    "m.vander(h)", "m.vander(m.tensor([1 + 1j, 2]))",
    # histogram
    "m.histogram(f, 4)", "m.histogram(f, bins=3, range=(0.0, 3.0))", "m.histogram(f, 3, "
    "weight=f.abs())", "m.histogram(f, 3, density=True)", "m.histogram(f, 3, weight=f.abs(), "
    "density=True)", "m.histogram(f, x)", "m.histogram(f, x, density=True)",
    "m.histogram(f, m.tensor([4.0, 1.0]))", "m.histogram(f, m.tensor([0.0, 1.0, 1.0, 2.0]))",
    "m.histogram(f.double(), 3)", "m.histogram(f, 3, range=(1.0, 1.0))",
    "m.histogram(m.tensor([2.0, 2.0]), 2)", "m.histogram(m.empty(0), 3)",
    "m.histogram(f, 3, range=[0, 3])", "m.histogram(f, 3, weight=f.abs().view(-1))",
    "m.histogram(m.tensor([1.0, nan, 2.0]), 2, range=(0, 2))", "f.histogram(5)",
    "m.histogram(f)",
    # unravel_index
    "m.unravel_index(m.tensor([4, 1, 5]), (2, 3))", "m.unravel_index(m.tensor(4), (2, 3))",
    "m.unravel_index(m.tensor([[4, 1]]), [2, 3])", "m.unravel_index(m.tensor([6, -1, -7]), (2, 3))",
    "m.unravel_index(m.tensor([1]), 6)", "m.unravel_index(m.tensor([1]), ())",
    "m.unravel_index(m.tensor([1], dtype=m.int32), m.Size([2, 3]))",
    "m.unravel_index(m.tensor([1], dtype=m.uint8), (2, 3))",
    "m.unravel_index(m.empty(0, dtype=m.long), (2, 3))",
    "m.unravel_index(m.tensor([5]), (2 ** 40, 2 ** 40))",
]

ERRORS = [
    "m.gcd(i, 3)", "m.gcd(3, i)", "m.gcd(f, i)", "m.gcd(m.tensor([True]), m.tensor([False]))",
    "m.lcm(f.double(), f.double())", "m.gcd(i, j[:2])", "i[0, :1].clone().gcd_(i)",
    "m.i0(m.tensor([1j]))", "m.i0(3)", "i.i0_()",
    "m.frexp(i)", "m.frexp(m.tensor([1j]))", "m.frexp(3.0)",
    "m.ldexp(f, 2)", "m.ldexp(2.0, i)", "i.clone().ldexp_(i)", "m.ldexp(f, i[:, :2])",
    "m.nextafter(f, 1.0)", "m.nextafter(i, i)", "m.nextafter(m.tensor([1j]), m.tensor([1j]))",
    "m.nextafter(m.tensor([True]), m.tensor([True]))",
    "m.diff(i, n=-1)", "m.diff(i, prepend=m.tensor([0]))", "m.diff(m.tensor(3))",
    "m.diff(i, dim=2)", "m.diff(i, n=1.5)", "m.diff(i, n=True)", "m.diff(i, prepend=3)",
    "m.isin(3, 4)", "m.isin(i, [4])", "m.isin(m.tensor([1j]), m.tensor([1j]))",
    "m.isin(m.tensor([True]), m.tensor([1]))", "m.isin(i, m.tensor([True]))",
    "m.isin(i, 1j)", "m.isin(True, i)", "m.isin(i, 2 ** 70)",
    "m.dist(i, i)", "m.dist(f, 2.0)", "m.dist(f, x[:2])", "m.dist(f, x, p='fro')",
    "m.dist(m.empty(0), m.empty(0), inf)",
    "m.renorm(f, 0, 0, 1.0)", "m.renorm(f, -1, 0, 1.0)", "m.renorm(f, nan, 0, 1.0)",
    "m.renorm(f, 2, 0, -1.0)", "m.renorm(f, 2, 0, -1.5)", "m.renorm(f, 2, 2, 1.0)",
    "m.renorm(i, 2, 0, 1.0)", "m.renorm(x, 2, 0, 1.0)", "m.renorm(f, 2j, 0, 1.0)",
    "m.renorm(f, 2, 0, 1j)", "m.renorm(f, 2, 0.0, 1)", "m.renorm(f, '2', 0, 1)",
    "m.cov(f, fweights=fw.float())", "m.cov(f, aweights=-w)", "m.cov(f, fweights=-fw)",
    "m.cov(f, fweights=fw[:3])", "m.cov(f, aweights=w[:3])", "m.cov(f, fweights=fw[None])",
    "m.cov(f, aweights=w.long())", "m.cov(m.zeros(2, 3, 4))", "m.cov(m.tensor([[True]]))",
    "m.cov(f, correction=0.5)", "m.cov(f, correction=True)", "m.cov(f, aweights=w * 0)",
    "m.cov(f, fweights=[1])", "m.corrcoef(m.zeros(2, 3, 4))", "m.corrcoef(m.tensor([True]))",
    "m.trapezoid(f, x, dx=1.0)", "m.trapezoid(f, 2.0)", "m.trapezoid(f, x[:3])",
    "m.trapezoid(f, x[None, :].expand(3, 4))", "m.trapezoid(m.tensor(3.0))",
    "m.trapezoid(f, dim=2)", "m.trapezoid(m.tensor([True, False]))",
    "m.trapezoid(f, m.tensor([True, False, True, True]))", "m.trapezoid(i, dx=True)",
    "m.trapz(f, x, dx=1)", "m.trapz(f, 2.0)", "m.trapz(f, x, dim=0)",
    "m.cumulative_trapezoid(f, 2.0)", "m.cumulative_trapezoid(f, x[:3])",
    "m.cumulative_trapezoid(m.tensor(2.0))", "m.cumulative_trapezoid(f, x, dx=1.0)",
    "m.cumulative_trapezoid(m.tensor([True, False]))",
    "m.vander(x, N=-1)", "m.vander(m.tensor(2.0))", "m.vander(f)", "m.vander(x, N=2.0)",
    "m.vander(x, N=True)",
    "m.histogram(f, m.tensor([1.0]))", "m.histogram(f, 0)", "m.histogram(f, -1)",
    "m.histogram(i, 3)", "m.histogram(i, m.tensor([1, 2]))", "m.histogram(h, 3)",
    "m.histogram(f, 3, range=(3.0, 1.0))", "m.histogram(f, 3, weight=w[:3])",
    "m.histogram(f, 3, weight=f.double())", "m.histogram(f.double(), x)",
    "m.histogram(f, 3, range=(0.0,))", "m.histogram(m.tensor([1.0, nan]), 3)",
    "m.histogram(m.tensor([1.0, inf]), 3)", "m.histogram(f, 3, range=(-inf, 2.0))",
    "m.histogram(f, 2.5)", "m.histogram(f, m.tensor([[1.0, 2.0]]))", "m.histogram([1.0], 3)",
    "m.histogram(f, 3, range=(0.0, nan))", "m.histogram(f, m.tensor([0, 1]))",
    "m.unravel_index(m.tensor([1.0]), (2, 3))", "m.unravel_index(m.tensor([True]), (2, 3))",
    "m.unravel_index(4, (2, 3))", "m.unravel_index(m.tensor([1]), (2, -3))",
    "m.unravel_index(m.tensor([1]), (2, 0))",
]
# Messages that name a Python class (torch.Tensor vs ember.Tensor, torch.float32 vs ...)
# or a type only known to PyTorch's argument parser are compared by exception type alone.
TYPE_ONLY = {"m.unravel_index(m.tensor([1.0]), (2, 3))",
             "m.unravel_index(m.tensor([True]), (2, 3))", "m.isin(i, [4])"}


@pytest.mark.parametrize("expr", VALUES)
def test_matches_torch(expr, torch_mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTorch's deprecation and cov() warnings
        expected = _evaluate(torch_mod, expr)
        actual = _evaluate(ember, expr)
    assert not isinstance(expected, Exception), f"torch raised {expected!r}"
    assert not isinstance(actual, Exception), f"{actual!r}"
    low = any(s in repr(expected) for s in ("'float16'", "'bfloat16'"))
    _close(expected, actual, 1e-2 if low else 1e-5)


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr, torch_mod):
    expected, actual = _evaluate(torch_mod, expr), _evaluate(ember, expr)
    assert isinstance(expected, Exception), f"torch gave {expected!r}"
    assert isinstance(actual, Exception), f"ember gave {actual!r}, torch raised {expected!r}"
    assert type(actual).__name__ == type(expected).__name__, (expected, actual)
    if expr not in TYPE_ONLY:
        assert str(actual) == str(expected)


# ---------------------------------------------------------------------- gradients
def _inputs(m, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 4))
    a[0, 1] = 0.0   # vander/cumprod and the norms at a zero entry
    return {"a": m.tensor(a, dtype=m.float64, requires_grad=True),
            "b": m.tensor(rng.standard_normal(4), dtype=m.float64, requires_grad=True),
            "p": m.tensor(rng.uniform(0.1, 2.0, 4), dtype=m.float64, requires_grad=True),
            "v": m.tensor(rng.standard_normal(5), dtype=m.float64, requires_grad=True),
            "n": m.tensor([3, -2, 0, 1])}


GRADIENTS = [
    "m.i0(a)", "m.i0(m.tensor([0.0, 1.0], dtype=m.float64, requires_grad=True) * a[0, :2])",
    "m.frexp(a * 10).mantissa", "m.ldexp(a, n)", "m.ldexp(a, b)", "m.ldexp(a, n * 70)",
    "m.nextafter(a, b)", "m.diff(a)", "m.diff(a, n=2, dim=0, prepend=b[None])",
    "m.diff(a, append=a[:, :1])", "m.dist(a, b)", "m.dist(a, b, 1)", "m.dist(a, b, 3.5)",
    "m.dist(a, b, inf)", "m.dist(a, a.detach())", "m.renorm(a, 2, 0, 1.0)",
    "m.renorm(a, 1, 1, 0.5)", "m.renorm(a, inf, 0, 1.0)", "m.renorm(a, 2, 0, 100.0)",
    "m.cov(a)", "m.cov(a, correction=0)", "m.cov(a, aweights=p)",
    "m.cov(a, fweights=n.abs(), aweights=p)", "m.corrcoef(a)", "m.corrcoef(a[0])",
    "m.trapezoid(a)", "m.trapezoid(a, b)", "m.trapezoid(a, dx=0.5, dim=0)",
    "m.trapz(a, b.sort().values)", "m.cumulative_trapezoid(a)", "m.cumulative_trapezoid(a, b)",
    "m.cumulative_trapezoid(a, dx=2.0, dim=0)",
    # NOTE: PyTorch 2.13's own vander cannot backpropagate (its cumprod runs in place on a
    # saved slice), so its gradients are checked against powers, x ** [N-1, ..., 0].
    ("m.vander(v)", "m.pow(v.unsqueeze(1), m.arange(4.0, -1.0, -1.0, dtype=m.float64))"),
    ("m.vander(a[0], 6, True)", "m.pow(a[0].unsqueeze(1), m.arange(6.0, dtype=m.float64))"),
]


def _grads(m, expr, seed, create_graph=False):
    env = _inputs(m, seed)
    env.update(m=m, inf=inf)
    out = eval(expr, env)
    rng = np.random.default_rng(seed + 1)
    weights = m.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)
    leaves = [env[k] for k in ("a", "b", "p", "v")]
    loss = (out * weights).sum()
    if not create_graph:
        loss.backward()
        return [None if t.grad is None else t.grad.tolist() for t in leaves]
    used = [t for t in leaves if t.grad_fn is None and t.requires_grad]
    firsts = m.autograd.grad(loss, used, create_graph=True, allow_unused=True)
    total = sum((g * g).sum() for g in firsts if g is not None and g.requires_grad)
    if not isinstance(total, m.Tensor):
        return []
    return [None if g is None else g.tolist() for g in
            m.autograd.grad(total, used, allow_unused=True)]


def _same_grads(expected, actual):
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert (e is None) == (a is None), (e, a)
        if e is not None:
            np.testing.assert_allclose(a, e, rtol=1e-7, atol=1e-10)


def _pair(case):
    return case if isinstance(case, tuple) else (case, case)


@pytest.mark.parametrize("case", GRADIENTS)
def test_gradients_match_torch(case, torch_mod):
    expr, reference = _pair(case)
    _same_grads(_grads(torch_mod, reference, 0), _grads(ember, expr, 0))


@pytest.mark.parametrize("case", ["m.i0(a)", "m.dist(a, b, 3.5)", "m.renorm(a, 2, 0, 1.0)",
                                  "m.cov(a, aweights=p)", "m.corrcoef(a)", GRADIENTS[-2],
                                  "m.cumulative_trapezoid(a, b)", "m.ldexp(a, b)"])
def test_second_derivatives_match_torch(case, torch_mod):
    expr, reference = _pair(case)
    _same_grads(_grads(torch_mod, reference, 1, True), _grads(ember, expr, 1, True))


def test_constant_results_do_not_require_grad(torch_mod):
    """vander(x, N=1) is all ones and dist(..., p=0) counts: PyTorch records no gradient for
    the first; for the second its backward fails, ember's gives zeros."""
    for m in (torch_mod, ember):
        v = m.tensor([1.0, 2.0], requires_grad=True)
        assert not m.vander(v, N=1).requires_grad and not m.vander(v, N=0).requires_grad
    v = ember.tensor([1.0, 0.0, -2.0], requires_grad=True)
    ember.dist(v, ember.zeros(3), 0).backward()
    assert v.grad.tolist() == ember.zeros(3).tolist()


def test_i1_derivative_at_zero(torch_mod):
    """i0'' at 0 goes through i1's limit (0.5), and the third derivative stays finite."""
    results = []
    for m in (torch_mod, ember):
        x = m.tensor([0.0, 1.5], dtype=m.float64, requires_grad=True)
        g1, = m.autograd.grad(m.i0(x).sum(), x, create_graph=True)
        g2, = m.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = m.autograd.grad(g2.sum(), x)
        results.append([g1.tolist(), g2.tolist(), g3.tolist()])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-7)


def test_grad_fn_names(torch_mod):
    def names(m):
        x, y = m.tensor([1.0, 2.0], requires_grad=True), m.tensor([3.0, 0.5])
        return [type(r.grad_fn).__name__
                for r in (m.i0(x), m.frexp(x)[0], m.ldexp(x, y), m.nextafter(x, y))]
    assert names(ember) == names(torch_mod)


# ---------------------------------------------------------------------- odds and ends
@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_integer_gcd_lcm_wraparound(name, dtype, torch_mod):
    """Random operands over the whole range, the minimum included (where abs() wraps)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    a = rng.integers(info.min, info.max, 400, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, 400, dtype=dtype, endpoint=True)
    a[:10], b[5:15], b[20:30], a[30:40] = info.min, 0, info.min, 1
    if name == "lcm" and info.bits >= 32:
        # NOTE: PyTorch's lcm divides the minimum by gcd = -1 there: a hardware trap (SIGFPE)
        # for int32/int64, which would kill the test process.
        a[a == info.min], b[b == info.min] = 0, 0
    expected = getattr(torch_mod, name)(torch_mod.from_numpy(a), torch_mod.from_numpy(b))
    actual = getattr(ember, name)(ember.from_numpy(a), ember.from_numpy(b))
    assert actual.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_cov_warns_on_nonpositive_degrees_of_freedom(torch_mod):
    results = []
    for m in (torch_mod, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(m.cov(m.tensor([[1.0, 2.0], [0.5, 3.0]]), correction=5).tolist())
        assert any(w.category is UserWarning and "cov(): degrees of freedom is <= 0. "
                   "Correction should be strictly less than the number of observations."
                   in str(w.message) for w in caught)
    assert results[1] == results[0]


def test_histogram_is_not_differentiable(torch_mod):
    for m in (torch_mod, ember):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        hist, edges = m.histogram(x, 2)
        assert hist.requires_grad and edges.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::histogram is not "
                                               "implemented"):
            hist.sum().backward()


def test_named_tuples(torch_mod):
    for name, fields in (("frexp", ("mantissa", "exponent")),
                         ("histogram", ("hist", "bin_edges"))):
        t = getattr(torch_mod.return_types, name)
        e = getattr(ember.return_types, name)
        assert e._fields == fields and t.n_fields == len(fields)
    r = ember.frexp(ember.tensor([1.0]))
    assert repr(r) == repr(torch_mod.frexp(torch_mod.tensor([1.0]))).replace("torch", "ember")


def test_out_arguments(torch_mod):
    for m in (torch_mod, ember):
        a, b = m.tensor([12, 18]), m.tensor([8, 27])
        out = m.empty(2, dtype=m.int64)
        assert m.gcd(a, b, out=out) is out and out.tolist() == [4, 9]
        mant, expo = m.empty(2), m.empty(2, dtype=m.int32)
        r = m.frexp(m.tensor([8.0, 3.0]), out=(mant, expo))
        assert r[0] is mant and expo.tolist() == [4, 2]
