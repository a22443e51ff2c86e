"""Complex autograd against real PyTorch: gradients follow PyTorch's convention (the
conjugate Wirtinger derivative, conj(f'(z)) * g for holomorphic f) for holomorphic ops, the
non-holomorphic ones (abs, angle, sgn, real, imag, complex) and the decompositions."""
import numpy as np
import pytest

import ember

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
B = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
W = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
HPD = A @ A.conj().T + 3 * np.eye(3)   # Hermitian positive definite

# name -> f(lib, x, y); x and y are complex leaves made from A and B (x from HPD where named)
OPS = {
    "mul": lambda L, x, y: x * y, "div": lambda L, x, y: x / y, "add_alpha":
    lambda L, x, y: L.add(x, y, alpha=2 - 1j), "matmul": lambda L, x, y: x @ y,
    "mm": lambda L, x, y: L.mm(x, y), "addmm": lambda L, x, y: L.addmm(x, x, y),
    "dot": lambda L, x, y: L.dot(x[0], y[0]), "vdot": lambda L, x, y: L.vdot(x[0], y[0]),
    "outer": lambda L, x, y: L.outer(x[0], y[0]),
    "einsum": lambda L, x, y: L.einsum("ij,jk->ik", x, y),
    "exp": lambda L, x, y: x.exp(), "log": lambda L, x, y: x.log(),
    "sin": lambda L, x, y: x.sin(), "cos": lambda L, x, y: x.cos(),
    "tanh": lambda L, x, y: x.tanh(), "sigmoid": lambda L, x, y: x.sigmoid(),
    "sqrt": lambda L, x, y: x.sqrt(), "rsqrt": lambda L, x, y: x.rsqrt(),
    "reciprocal": lambda L, x, y: x.reciprocal(), "square": lambda L, x, y: x.square(),
    "pow_scalar": lambda L, x, y: x ** 3, "pow_tensor": lambda L, x, y: x ** y,
    "expm1": lambda L, x, y: x.expm1(), "log1p": lambda L, x, y: x.log1p(),
    "prod": lambda L, x, y: x.prod(0), "cumprod": lambda L, x, y: x.cumprod(1),
    "sum_mean": lambda L, x, y: x.sum(0) + x.mean(1),
    "abs": lambda L, x, y: x.abs(), "angle": lambda L, x, y: x.angle(),
    "sgn": lambda L, x, y: x.sgn(), "real_imag": lambda L, x, y: x.real * y.imag,
    "conj_mul": lambda L, x, y: x.conj() * y,
    "complex": lambda L, x, y: L.complex(x.real, y.imag) * x,
    "polar": lambda L, x, y: L.polar(x.abs(), y.angle()),
    "inv": lambda L, x, y: L.linalg.inv(x), "det": lambda L, x, y: L.linalg.det(x),
    "solve": lambda L, x, y: L.linalg.solve(x, y),
    "slogdet": lambda L, x, y: L.linalg.slogdet(x)[1],
    "cholesky": lambda L, x, y: L.linalg.cholesky(x @ x.mH + 3 * L.eye(3)),
    "eigvalsh": lambda L, x, y: L.linalg.eigvalsh(x @ x.mH),
    "svdvals": lambda L, x, y: L.linalg.svdvals(x),
    "pinv": lambda L, x, y: L.linalg.pinv(x), "matrix_exp": lambda L, x, y: L.linalg.matrix_exp(x),
    "norm": lambda L, x, y: L.linalg.norm(x), "vector_norm": lambda L, x, y:
    L.linalg.vector_norm(x, 3, dim=1),
    "lerp": lambda L, x, y: L.lerp(x, y, 0.3), "addcmul": lambda L, x, y: L.addcmul(x, x, y,
                                                                                   value=0.5),
    "addcdiv": lambda L, x, y: L.addcdiv(x, x, y, value=2), "kron": lambda L, x, y: L.kron(x, y),
    "tensordot": lambda L, x, y: L.tensordot(x, y, dims=1),
    "cross": lambda L, x, y: L.linalg.cross(x, y), "trace": lambda L, x, y: L.trace(x @ y),
    "cumsum_flip": lambda L, x, y: x.cumsum(0).flip(1) * y,
    "where": lambda L, x, y: L.where(x.real > 0, x * y, y),
    "masked_fill": lambda L, x, y: (x * y).masked_fill(x.real > 0, 0),
    "var_std": lambda L, x, y: x.var(0) + x.std(1), "index": lambda L, x, y: x[[0, 2, 0]] * y,
    "stack_cat": lambda L, x, y: L.cat([L.stack([x, y]).sum(0), x * y]),
    "sinh_cosh": lambda L, x, y: x.sinh() * y.cosh(), "asin": lambda L, x, y: (x / 4).asin(),
    "atan": lambda L, x, y: (x / 4).atan(), "log2_log10": lambda L, x, y: x.log2() + y.log10(),
    "exp2": lambda L, x, y: L.exp2(x), "tan": lambda L, x, y: (x / 4).tan(),
}


def _grads(lib, f, create_graph=False):
    x, y = (lib.tensor(a, requires_grad=True) for a in (A, B))
    out = f(lib, x, y)
    w = np.resize(W.ravel(), out.numel()).reshape(tuple(out.shape))
    loss = (out.real * lib.tensor(w.real.copy())).sum()
    if out.is_complex():
        loss = loss + (out.imag * lib.tensor(w.imag.copy())).sum()
    if not create_graph:
        loss.backward()
        return [t.grad for t in (x, y)]
    gx, = lib.autograd.grad(loss, x, create_graph=True)
    second = (gx.real * gx.imag).sum() + (gx * gx.conj()).real.sum()
    second.backward()
    return [gx, x.grad, y.grad]


def _check(ours, theirs):
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None or not np.any(a.numpy())
            continue
        np.testing.assert_allclose(a.detach().resolve_conj().numpy(),
                                   b.detach().resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-9)


@pytest.mark.parametrize("name", list(OPS))
def test_complex_gradient_matches_torch(name, torch_mod):
    _check(_grads(ember, OPS[name]), _grads(torch_mod, OPS[name]))


@pytest.mark.parametrize("name", ["mul", "div", "matmul", "exp", "tanh", "pow_tensor", "abs",
                                  "sgn", "inv"])
def test_complex_double_backward_matches_torch(name, torch_mod):
    _check(_grads(ember, OPS[name], True), _grads(torch_mod, OPS[name], True))


def test_real_graphs_do_not_pay_for_it():
    """Nodes with real results take the plain path (no conj around their VJP)."""
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert not (x * x).grad_fn.conj_around
    z = ember.tensor([1 + 1j], requires_grad=True)
    assert (z * z).grad_fn.conj_around and not z.abs().grad_fn.conj_around


def test_complex_errors_match_torch(torch_mod):
    for make in (lambda L: (L.tensor([1, 2]), L.tensor([1, 2])),
                 lambda L: (L.tensor([1.0]), L.tensor([1.0], dtype=L.float64))):
        errors = []
        for lib in (ember, torch_mod):
            with pytest.raises(RuntimeError) as info:
                lib.complex(*make(lib))
            errors.append(str(info.value))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("part", ["real", "imag", "view_as_real"])
def test_in_place_write_through_a_real_view_of_a_complex_tensor(part, torch_mod):
    """Writes through .real / .imag / view_as_real reach the complex base's gradient at the
    right component (CopySlices over (real, imag) pairs)."""
    res = []
    for lib in (ember, torch_mod):
        z = lib.tensor(A[:2], requires_grad=True)
        y = z * 2
        if part == "view_as_real":
            v = lib.view_as_real(y)[:, 1:]
        else:
            v = getattr(y, part)[:, ::2]
        v.mul_(3).add_(z.detach().real[:, :v.shape[1]])
        w = lib.tensor(W[:2])
        (y * w).abs().sum().backward()
        res.append([y.detach(), z.grad])
    _check(res[0], res[1])
