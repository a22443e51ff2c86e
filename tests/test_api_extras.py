"""Construction and API extras against real PyTorch: tril/triu_indices, block_diag, the window
functions, view_as_real/view_as_complex, the is_* queries, fill and the torch-level in-place
aliases (torch.abs_, torch.clamp_, ...)."""
import numpy as np
import pytest

import ember


def outcome(make, m):
    """(dtype name, shape, values) of `make(m)`, the value itself for a non-tensor, or
    (exception type, message)."""
    try:
        r = make(m)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc).__name__, str(exc).replace("ember", "torch")
    if not isinstance(r, (ember.Tensor, m.Tensor)):
        return r
    values = r.float().tolist() if str(r.dtype).endswith("bfloat16") else r.tolist()
    return str(r.dtype).split(".")[-1], tuple(r.shape), values


def check(make, torch):
    assert outcome(make, ember) == outcome(make, torch)


def grads(m, make, weights_of):
    """The .grad of each float64 leaf `make(m)` returns, after backward of a weighted sum."""
    leaves = [m.tensor(a, requires_grad=True) for a in make()]
    out = weights_of(m, leaves)
    out.backward()
    return [leaf.grad.numpy() for leaf in leaves]


# ---------------------------------------------------------------------- tril/triu_indices
TRIANGLE = {
    "square": lambda f, m: f(4, 4),
    "wide offset": lambda f, m: f(3, 5, 1),
    "tall negative offset": lambda f, m: f(5, 3, -2),
    "offset past the end": lambda f, m: f(3, 4, 10),
    "offset before the start": lambda f, m: f(3, 4, -10),
    "no rows": lambda f, m: f(0, 4),
    "int32": lambda f, m: f(3, 3, dtype=m.int32),
    "explicit options": lambda f, m: f(3, 3, device="cpu", dtype=m.long),
    "0-d tensor size": lambda f, m: f(m.tensor(3), 2),
    "negative row": lambda f, m: f(-1, 4),
    "negative col": lambda f, m: f(3, -4, dtype=m.float32),
    "int16": lambda f, m: f(3, 3, dtype=m.int16),
    "float32": lambda f, m: f(3, 3, dtype=m.float32),
    "float row": lambda f, m: f(3.0, 4),
}


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("case", list(TRIANGLE))
def test_triangle_indices(name, case, torch_mod):
    check(lambda m: TRIANGLE[case](getattr(m, name), m), torch_mod)


# ---------------------------------------------------------------------- block_diag
BLOCK_DIAG = {
    "2-d blocks": lambda m: m.block_diag(m.tensor([[1., 2.], [3., 4.]]), m.ones(1, 3)),
    "0-d and 1-d": lambda m: m.block_diag(m.tensor(7), m.tensor([1, 2, 3]), m.tensor([[5]])),
    "empty blocks": lambda m: m.block_diag(m.zeros(0, 3), m.ones(2, 0), m.ones(1, 1)),
    "no tensors": lambda m: m.block_diag(),
    "one 1-d empty": lambda m: m.block_diag(m.zeros(0)),
    "int and float": lambda m: m.block_diag(m.tensor([1, 2]), m.tensor([[1.5]])),
    "0-d float64 with int": lambda m: m.block_diag(m.tensor([1, 2]),
                                                   m.tensor(1.5, dtype=m.float64)),
    "0-d int64 with int8": lambda m: m.block_diag(m.tensor([1, 2], dtype=m.int8),
                                                  m.tensor(300)),
    "half and bfloat16": lambda m: m.block_diag(m.ones(2, dtype=m.float16),
                                                m.ones(1, dtype=m.bfloat16)),
    "complex64 and float64": lambda m: m.block_diag(m.tensor([1 + 2j]),
                                                    m.ones(2, dtype=m.float64)),
    "bool": lambda m: m.block_diag(m.tensor([True, False]), m.tensor(True)),
    "3-d input": lambda m: m.block_diag(m.zeros(2), m.zeros(2, 2, 2)),
    "list input": lambda m: m.block_diag(m.ones(2), [1, 2]),
}


@pytest.mark.parametrize("case", list(BLOCK_DIAG))
def test_block_diag(case, torch_mod):
    check(BLOCK_DIAG[case], torch_mod)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_block_diag_gradient(dtype, torch_mod):
    rng = np.random.default_rng(0)

    def make():
        parts = [rng.normal(size=s) for s in ((2, 3), (4,), (), (3, 1))]
        return [p + 1j * p[..., None].T.sum() if dtype == "complex128" else p for p in parts]

    def loss(m, leaves):
        out = m.block_diag(*leaves)
        weights = m.tensor(np.arange(out.numel()).reshape(out.shape) / 7 - 1)
        return (out * weights).abs().sum() if dtype == "complex128" else (out * weights).sum()

    state = rng.bit_generator.state
    mine = grads(ember, make, loss)
    rng.bit_generator.state = state
    theirs = grads(torch_mod, make, loss)
    for e, t in zip(mine, theirs):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)
    a = ember.ones(2, requires_grad=True)
    assert type(ember.block_diag(a, a).grad_fn).__name__ == \
        type(torch_mod.block_diag(*[torch_mod.ones(2, requires_grad=True)] * 2).grad_fn).__name__


# ---------------------------------------------------------------------- window functions
WINDOWS = {
    "hann_window": {},
    "hamming_window": {"alpha": 0.6, "beta": 0.35},
    "blackman_window": {},
    "bartlett_window": {},
    "kaiser_window": {"beta": 5.5},
}
# float32 differs where NumPy's cosine and PyTorch's vectorised one round differently.
TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "float16": 0, "bfloat16": 0}


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("name", list(WINDOWS))
def test_window_values(name, dtype, torch_mod):
    for n in range(0, 14):
        for periodic in (True, False):
            for extra in ({}, WINDOWS[name]):
                e = getattr(ember, name)(n, periodic, dtype=getattr(ember, dtype), **extra)
                t = getattr(torch_mod, name)(n, periodic, dtype=getattr(torch_mod, dtype),
                                             **extra)
                assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
                assert tuple(e.shape) == tuple(t.shape)
                np.testing.assert_allclose(e.double().numpy(), t.double().numpy(), rtol=0,
                                           atol=TOLERANCE[dtype], err_msg=f"{n} {periodic}")


WINDOW_CALLS = {
    "defaults": lambda f, m: (str(f(6).dtype)[-7:], tuple(f(6).shape), f(6).requires_grad),
    "requires_grad": lambda f, m: f(5, requires_grad=True).requires_grad,
    "length 1 float64": lambda f, m: f(1, dtype=m.float64),
    "length 0 complex": lambda f, m: f(0, dtype=m.complex64),
    "length 1 complex": lambda f, m: f(1, dtype=m.complex128),
    "length 4 complex": lambda f, m: f(4, dtype=m.complex64),
    "long dtype": lambda f, m: f(4, dtype=m.long),
    "bool dtype before negative length": lambda f, m: f(-1, dtype=m.bool),
    "negative length": lambda f, m: f(-3),
    "float length": lambda f, m: f(4.0),
    "bool length": lambda f, m: f(True),
}


@pytest.mark.parametrize("call", list(WINDOW_CALLS))
@pytest.mark.parametrize("name", list(WINDOWS))
def test_window_options_and_errors(name, call, torch_mod):
    check(lambda m: WINDOW_CALLS[call](getattr(m, name), m), torch_mod)


def test_overload_type_errors(torch_mod):
    """PyTorch lists its overloads in these messages; the exception type is compared."""
    for m in (ember, torch_mod):
        with pytest.raises(TypeError):
            m.hann_window(4, 1)
        with pytest.raises(TypeError):
            m.fill([1.0], 2)


# ---------------------------------------------------------------------- view_as_real/complex
Z = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, -1 + 1j, 4 - 2j]])
F = np.arange(24.0).reshape(3, 4, 2) / 5 - 1

VIEW_AS = {
    "real complex64": lambda m: m.view_as_real(m.tensor(Z, dtype=m.complex64)),
    "real complex128": lambda m: m.view_as_real(m.tensor(Z)),
    "real 0-d": lambda m: m.view_as_real(m.tensor(1 - 3j)),
    "real transposed": lambda m: m.view_as_real(m.tensor(Z).t()),
    "real strided": lambda m: m.view_as_real(m.tensor(Z)[:, ::2]),
    "real empty": lambda m: m.view_as_real(m.zeros(0, 3, dtype=m.complex64)),
    "real of float": lambda m: m.view_as_real(m.ones(2)),
    "real of list": lambda m: m.view_as_real([1j]),
    "complex float32": lambda m: m.view_as_complex(m.tensor(F, dtype=m.float32)),
    "complex float64": lambda m: m.view_as_complex(m.tensor(F)),
    "complex to 0-d": lambda m: m.view_as_complex(m.tensor([1.0, 2.0])),
    "complex every other row": lambda m: m.view_as_complex(m.tensor(F)[:, ::2]),
    "complex even offset": lambda m: m.view_as_complex(m.tensor(F).reshape(-1)[2:10].view(4, 2)),
    "complex empty": lambda m: m.view_as_complex(m.zeros(0, 2)),
    "complex last dim 3": lambda m: m.view_as_complex(m.zeros(3, 3)),
    "complex last stride 2": lambda m: m.view_as_complex(m.zeros(2, 3).t()),
    "complex odd stride": lambda m: m.view_as_complex(m.zeros(3, 3)[:, :2]),
    "complex odd offset": lambda m: m.view_as_complex(m.zeros(6).narrow(0, 1, 4).view(2, 2)),
    "complex 0-d": lambda m: m.view_as_complex(m.tensor(1.0)),
    "complex of long": lambda m: m.view_as_complex(m.zeros(2, dtype=m.long)),
    "complex of bfloat16": lambda m: m.view_as_complex(m.zeros(2, dtype=m.bfloat16)),
    "complex of list": lambda m: m.view_as_complex([1.0, 2.0]),
}


@pytest.mark.parametrize("case", list(VIEW_AS))
def test_view_as_values_and_errors(case, torch_mod):
    check(VIEW_AS[case], torch_mod)


def _sharing(m, view_of, base):
    """What a view and its base see of each other's writes, and their version counters."""
    v = view_of(base)
    seen = [v._base is base, v.data_ptr() == base.data_ptr()]
    base.mul_(2)
    seen += [v.tolist(), v._version, base._version]
    v.add_(1)
    seen += [base.tolist(), v._version, base._version]
    return seen


def test_view_as_real_shares_memory(torch_mod):
    mine = _sharing(ember, ember.view_as_real, ember.tensor(Z))
    theirs = _sharing(torch_mod, torch_mod.view_as_real, torch_mod.tensor(Z))
    assert mine == theirs


def test_view_as_complex_shares_memory(torch_mod):
    mine = _sharing(ember, ember.view_as_complex, ember.tensor(F))
    theirs = _sharing(torch_mod, torch_mod.view_as_complex, torch_mod.tensor(F))
    assert mine == theirs


def test_view_as_real_gradient(torch_mod):
    def loss(m, leaves):
        r = m.view_as_real(leaves[0] * 1)  # (a non-leaf: views of leaves are the easy case)
        return (r * m.tensor(np.arange(12.0).reshape(2, 3, 2) - 3)).sum() + \
            m.view_as_real(leaves[0].t()).pow(2).sum()

    mine, theirs = (grads(m, lambda: [Z], loss) for m in (ember, torch_mod))
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12)


def test_view_as_complex_gradient(torch_mod):
    def loss(m, leaves):
        c = m.view_as_complex(leaves[0])
        return (c * m.tensor(Z.T.reshape(3, 2).repeat(2, 1))).abs().sum() + \
            m.view_as_complex(leaves[0][:, ::2]).real.sum()

    mine, theirs = (grads(m, lambda: [F], loss) for m in (ember, torch_mod))
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12)


def test_view_as_grad_fn_names(torch_mod):
    def names(m):
        z = m.tensor(Z, requires_grad=True)
        r = m.view_as_real(z)
        return type(r.grad_fn).__name__, type(m.view_as_complex(r).grad_fn).__name__
    assert names(ember) == names(torch_mod)


# ---------------------------------------------------------------------- queries
QUERIES = {
    "is_conj real": lambda m: (m.is_conj(m.ones(2)), m.ones(2).is_conj()),
    "is_conj resolved": lambda m: m.tensor([1j]).conj().resolve_conj().is_conj(),
    "is_neg": lambda m: (m.is_neg(m.tensor([1j])), m.tensor([1j]).is_neg()),
    "is_conj of list": lambda m: m.is_conj([1]),
    "is_neg of list": lambda m: m.is_neg([1]),
    "is_signed": lambda m: [m.is_signed(m.ones(1, dtype=getattr(m, d))) for d in
                            ("bool", "uint8", "int8", "int64", "float16", "complex64")],
    "is_signed of list": lambda m: m.is_signed([1]),
    "is_same_size": lambda m: (m.is_same_size(m.ones(3), m.zeros(3)),
                               m.is_same_size(m.ones(3), m.ones(1, 3)),
                               m.ones(2).is_same_size(m.ones(2, dtype=m.long))),
    "is_same_size of list": lambda m: m.is_same_size(m.ones(3), [1, 2, 3]),
    "Tensor.is_same_size of list": lambda m: m.ones(3).is_same_size([1, 2, 3]),
    "is_inference": lambda m: (m.is_inference(m.ones(2)), m.ones(2).is_inference()),
    "is_inference of list": lambda m: m.is_inference([1]),
}


@pytest.mark.parametrize("case", list(QUERIES))
def test_queries(case, torch_mod):
    check(QUERIES[case], torch_mod)


def test_is_inference_outside_inference_mode(torch_mod):
    def answers(m):
        with m.no_grad():
            a = m.ones(2)
        with m.inference_mode(False):
            b = m.ones(2) * 2
        return a.is_inference(), b.is_inference()
    assert answers(ember) == answers(torch_mod)


# ---------------------------------------------------------------------- fill
FILL = {
    "float with int": lambda m: m.fill(m.ones(3), 2),
    "float with 0-d tensor": lambda m: m.fill(m.ones(2, 2), m.tensor(2.5, dtype=m.float64)),
    "long with float": lambda m: m.fill(m.ones(3, dtype=m.long), 2.7),
    "long with float tensor": lambda m: m.fill(m.ones(3, dtype=m.long), m.tensor(-2.7)),
    "uint8 with -1": lambda m: m.fill(m.ones(3, dtype=m.uint8), -1),
    "bool with complex": lambda m: m.fill(m.ones(3, dtype=m.bool), 1 + 2j),
    "keyword value": lambda m: m.fill(m.ones(2), value=3),
    "input unchanged": lambda m: (lambda x: (m.fill(x, 5), x)[1])(m.ones(2)),
    "uint8 overflow": lambda m: m.fill(m.ones(3, dtype=m.uint8), 300),
    "1-d value": lambda m: m.fill(m.ones(3), m.tensor([2.5, 3.0])),
}


@pytest.mark.parametrize("case", list(FILL))
def test_fill(case, torch_mod):
    check(FILL[case], torch_mod)


def test_fill_gradient(torch_mod):
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        v = m.tensor(4.0, dtype=m.float64, requires_grad=True)
        w = m.tensor([0.5, -2.0, 3.0], dtype=m.float64)
        a, b = m.fill(x, 7), m.fill(x, v)
        ((a + b) * w).sum().backward()
        return (type(a.grad_fn).__name__, type(b.grad_fn).__name__, x.grad.tolist(),
                v.grad.item())
    assert run(ember) == run(torch_mod)


# ---------------------------------------------------------------------- in-place aliases
def _x(values, dtype="float64"):
    return lambda m: m.tensor(np.array(values), dtype=getattr(m, dtype))


REAL = _x([-1.7, -0.5, 0.0, 0.3, 2.5])
UNIT = _x([-0.9, -0.2, 0.0, 0.4, 0.8])
ABOVE_ONE = _x([1.0, 1.5, 3.0])
POSITIVE = _x([0.1, 1.0, 2.5])
PROBABILITY = _x([0.05, 0.3, 0.9])
SPECIAL = _x([np.nan, np.inf, -np.inf, 1.5])

# name -> (input, positional args (a function of the module), keyword args)
ALIASES = {name: (REAL, None, {}) for name in (
    "abs_", "arctan_", "arcsinh_", "asinh_", "atan_", "ceil_", "cos_", "cosh_", "deg2rad_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "relu_", "rrelu_", "selu_", "sigmoid_", "sin_",
    "sinc_", "sinh_", "square_", "tan_", "tanh_", "trunc_", "zero_", "round_")}
ALIASES.update({name: (UNIT, None, {}) for name in (
    "acos_", "arccos_", "arcsin_", "arctanh_", "asin_", "atanh_")})
ALIASES.update({name: (ABOVE_ONE, None, {}) for name in ("acosh_", "arccosh_")})
ALIASES.update({name: (POSITIVE, None, {}) for name in (
    "log10_", "log1p_", "log2_", "log_", "rsqrt_", "sqrt_")})
ALIASES.update({
    "celu_": (REAL, lambda m: (0.7,), {}),
    "clamp_": (REAL, lambda m: (-0.6, 0.4), {}),
    "clip_": (REAL, None, {"min": -1.0}),
    "clamp_max_": (REAL, lambda m: (0.2,), {}),
    "clamp_min_": (REAL, lambda m: (m.tensor(-0.3, dtype=m.float64),), {}),
    "conj_physical_": (_x([1 + 2j, -3j], "complex128"), None, {}),
    "detach_": (lambda m: REAL(m).requires_grad_() * 2, None, {}),
    "fill_": (REAL, lambda m: (2.25,), {}),
    "index_put_": (REAL, lambda m: ((m.tensor([0, 3]),), m.tensor([9.0, 8.0],
                                                              dtype=m.float64)),
                   {"accumulate": True}),
    "logit_": (PROBABILITY, lambda m: (0.1,), {}),
    "nan_to_num_": (SPECIAL, None, {"posinf": 7.0}),
    "round_": (REAL, None, {"decimals": 1}),
    "rrelu_": (REAL, lambda m: (0.1, 0.2, True), {}),
    "threshold_": (REAL, lambda m: (0.1, 20.0), {}),
    "xlogy_": (POSITIVE, lambda m: (m.tensor([0.5, 2.0, 3.0], dtype=m.float64),), {}),
    "dropout_": (REAL, lambda m: (0.4, True), {}),
    "addmv_": (_x([1.0, -1.0]), lambda m: (m.tensor(np.arange(6.0).reshape(2, 3)),
                                           m.tensor([1.0, 0.5, -2.0], dtype=m.float64)),
               {"beta": 0.5, "alpha": 2.0}),
})


def _apply_alias(m, name):
    make, args, kwargs = ALIASES[name]
    m.manual_seed(0)  # (dropout_ and rrelu_ draw from the generator: ember's stream is torch's)
    x = make(m)
    out = getattr(m, name)(x, *(args(m) if args else ()), **kwargs)
    return out is x, str(x.dtype).split(".")[-1], x.requires_grad, x.detach().numpy()


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_inplace_alias(name, torch_mod):
    assert hasattr(torch_mod, name)
    *mine, mine_values = _apply_alias(ember, name)
    *theirs, their_values = _apply_alias(torch_mod, name)
    assert mine == theirs
    np.testing.assert_allclose(mine_values, their_values, rtol=1e-12, atol=1e-15)


def test_inplace_alias_rejects_non_tensors(torch_mod):
    check(lambda m: m.abs_([1.0]), torch_mod)
    check(lambda m: m.dropout_([1.0], 0.5, True), torch_mod)
