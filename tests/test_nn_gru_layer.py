"""nn.GRU's layer as one op (ops/rnn_ops.py `gru_layer`, backends/gru.py, csrc/gru.c) against
real torch.nn.GRU on the same weights: outputs, final states, every gradient and the double
backward; the compiled kernel against its NumPy reference; the same bits at 1 and 2 threads.
(tests/test_nn_rnn.py covers the packed and step-by-step paths.)"""
import itertools

import numpy as np
import pytest

import ember
from ember.backends import cpu_kernels, gru

needs_build = pytest.mark.skipif(cpu_kernels.compiled is None,
                                 reason="EMBER_KERNELS=numpy: the compiled kernels are off")


def _pair(torch_mod, dtype, **kwargs):
    torch_mod.manual_seed(0)
    theirs = torch_mod.nn.GRU(3, 5, **kwargs).to(getattr(torch_mod, dtype))
    ours = ember.nn.GRU(3, 5, **kwargs).to(getattr(ember, dtype))
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _run(lib, module, x, h0):
    """Output, h_n and the gradients of x, h0 and every parameter of a loss that reads every
    output and the final state."""
    xs, hs = lib.tensor(x, requires_grad=True), lib.tensor(h0, requires_grad=True)
    out, h = module(xs, hs)
    weights = lib.tensor(np.linspace(-1, 1, out.shape[-1]).astype(x.dtype))
    ((out * out * weights).sum() + (h * h[..., :1]).sum()).backward()
    return [out, h, xs.grad, hs.grad] + [p.grad for p in module.parameters()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layers,bidirectional,batch_first,bias",
                         [c for c in itertools.product((1, 2), (False, True), (False, True),
                                                       (True, False))
                          if c[0] == 2 or not c[2]])
def test_gru_matches_torch(dtype, layers, bidirectional, batch_first, bias, torch_mod):
    ours, theirs = _pair(torch_mod, dtype, num_layers=layers, bidirectional=bidirectional,
                         batch_first=batch_first, bias=bias)
    rng = np.random.default_rng(layers * 8 + bidirectional * 4 + batch_first * 2 + bias)
    x = rng.standard_normal((4, 6, 3) if batch_first else (6, 4, 3)).astype(dtype)
    h0 = rng.standard_normal((layers * (2 if bidirectional else 1), 4, 5)).astype(dtype)
    # float32: torch's products (MKL/oneDNN) and ember's sum in another order, carried
    # through six steps and two layers
    tol = 2e-5 if dtype == "float32" else 1e-12
    names = ["output", "h_n", "x.grad", "h0.grad"] + [n for n, _ in ours.named_parameters()]
    for name, a, b in zip(names, _run(ember, ours, x, h0), _run(torch_mod, theirs, x, h0)):
        assert a.dtype == getattr(ember, dtype), name
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol,
                                   atol=tol, err_msg=name)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_gru_rounds_as_torch(dtype, torch_mod):
    """float16/bfloat16 run the step-by-step graph, each op computed in float32 and rounded as
    PyTorch's ops are: torch's output bits."""
    torch_mod.manual_seed(0)
    theirs = torch_mod.nn.GRU(4, 5, bidirectional=True).to(getattr(torch_mod, dtype))
    ours = ember.nn.GRU(4, 5, bidirectional=True).to(getattr(ember, dtype))
    ours.load_state_dict({k: ember.tensor(v.float().detach().numpy()).to(getattr(ember, dtype))
                          for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 3, 4)).astype(np.float32)
    got = ours(ember.tensor(x).to(getattr(ember, dtype)))[0]
    want = theirs(torch_mod.tensor(x).to(getattr(torch_mod, dtype)))[0]
    assert got.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(got.float().detach().numpy(), want.float().detach().numpy())


def test_gru_graph_names_match_torch(torch_mod):
    """PyTorch's CPU GRU has no layer node: its output's grad_fn is a StackBackward0, and so is
    the layer op's (see ops/rnn_ops.py)."""
    ours, theirs = _pair(torch_mod, "float32", num_layers=2, bidirectional=True)
    names = []
    for lib, module in ((ember, ours), (torch_mod, theirs)):
        x = lib.tensor(np.ones((5, 2, 3), np.float32), requires_grad=True)
        out, h = module(x)
        names.append((type(out.grad_fn).__name__, type(h.grad_fn).__name__))
    assert names[0] == names[1] == ("CatBackward0", "StackBackward0")
    ours, theirs = _pair(torch_mod, "float32")
    out = [m(lib.ones(5, 2, 3, requires_grad=True))[0]
           for lib, m in ((ember, ours), (torch_mod, theirs))]
    assert type(out[0].grad_fn).__name__ == type(out[1].grad_fn).__name__ == "StackBackward0"


@pytest.mark.parametrize("bidirectional,bias", [(False, True), (True, False)])
def test_gru_double_backward_matches_torch(bidirectional, bias, torch_mod):
    """create_graph=True through a whole GRU layer: the gradient is differentiable again."""
    rng = np.random.default_rng(6)
    ours, theirs = _pair(torch_mod, "float64", bidirectional=bidirectional, bias=bias)
    x = rng.standard_normal((4, 2, 3))
    h0 = rng.standard_normal((2 if bidirectional else 1, 2, 5))
    res = []
    for lib, module in ((ember, ours), (torch_mod, theirs)):
        xs, hs = lib.tensor(x, requires_grad=True), lib.tensor(h0, requires_grad=True)
        out, h = module(xs, hs)
        loss = (out * out).sum() + (h * h).sum()
        gx, gh = lib.autograd.grad(loss, [xs, hs], create_graph=True)
        ((gx * gx).sum() + gh.sum()).backward()
        res.append([gx, gh, xs.grad, hs.grad] + [p.grad for p in module.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-9)


def test_gru_input_without_grad(torch_mod):
    """An input that needs no gradient gets none; the weights still get theirs."""
    ours, theirs = _pair(torch_mod, "float64")
    x = np.random.default_rng(3).standard_normal((3, 2, 3))
    got = ours(ember.tensor(x))[0]
    want = theirs(torch_mod.tensor(x))[0]
    got.sum().backward()
    want.sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-12)


def _layer_arrays(steps, batch, n, seed):
    rng = np.random.default_rng(seed)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return dict(gates_x=f32(steps, batch, 3 * n) * 2, h0=f32(batch, n),
                w_hh=f32(3 * n, n) / np.float32(np.sqrt(n)), b_hh=f32(3 * n),
                grad_out=f32(steps, batch, n), grad_h=f32(batch, n))


def _layer(a, reverse, bias, threads):
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(threads)
        hs, h, acts = gru.gru_layer(a["gates_x"], a["h0"], a["w_hh"],
                                    a["b_hh"] if bias else None, reverse)
        grads = gru.gru_layer_backward(a["grad_out"], a["grad_h"], a["h0"], a["w_hh"], acts,
                                       hs, reverse)
    finally:
        ember.set_num_threads(before)
    return (hs, h, acts) + tuple(grads)


@needs_build
@pytest.mark.parametrize("reverse,bias", [(False, True), (True, True), (False, False)])
@pytest.mark.parametrize("steps,batch,n", [(1, 1, 1), (7, 3, 5), (35, 32, 128), (5, 9, 200)])
def test_gru_kernel_matches_numpy_reference(reverse, bias, steps, batch, n, monkeypatch):
    a = _layer_arrays(steps, batch, n, steps + n)
    one, two = _layer(a, reverse, bias, 1), _layer(a, reverse, bias, 2)
    # (the (35, 32, 128) and (5, 9, 200) layers split their batch rows between two threads:
    # each element's product is one chain whatever the split)
    for x, y in zip(one, two):
        np.testing.assert_array_equal(x, y)
    monkeypatch.setattr(gru, "compiled", None)
    ref = _layer(a, reverse, bias, 1)
    # Not bit for bit: the kernel's products (gemm.c's fused multiply-add chains, or BLAS's
    # sgemm) sum in another order than NumPy's matmul, and its exp is not NumPy's (a few ulps);
    # the gate arithmetic rounds at the same steps, so what remains is float32 rounding
    # carried through the steps
    for x, y in zip(one, ref):
        np.testing.assert_allclose(x, y, rtol=2e-5, atol=2e-5 * (1 + np.abs(y).max()))


@needs_build
def test_gru_gate_arithmetic_is_the_references_given_the_same_products(monkeypatch):
    """One step with W_hh = 0 (every product exactly 0): the forward within a few ulps (exp and
    tanh are the kernel's own), and the backward's gate gradients from the same activations
    bit for bit (the same formula, rounding for rounding)."""
    a = _layer_arrays(1, 4, 33, 5)
    a["w_hh"][:] = 0
    fast = _layer(a, False, True, 1)
    monkeypatch.setattr(gru, "compiled", None)
    ref = _layer(a, False, True, 1)
    eps = np.finfo(np.float32).eps
    for x, y in zip(fast[:3], ref[:3]):
        np.testing.assert_allclose(x, y, rtol=8 * eps, atol=8 * eps)
    hs, acts = ref[0], ref[2]
    fast = gru.gru_layer_backward(a["grad_out"], a["grad_h"], a["h0"], a["w_hh"], acts, hs,
                                  False)
    monkeypatch.setattr(gru, "compiled", cpu_kernels.compiled)
    compiled = gru.gru_layer_backward(a["grad_out"], a["grad_h"], a["h0"], a["w_hh"], acts,
                                      hs, False)
    for x, y in zip(compiled, fast):
        np.testing.assert_array_equal(x, y)


def test_gru_layer_float64_runs_the_reference(monkeypatch):
    """float64 never reaches the float32 kernel: it gives the reference's bits."""
    a = {k: v.astype(np.float64) for k, v in _layer_arrays(4, 3, 6, 9).items()}
    got = _layer(a, True, True, 2)
    monkeypatch.setattr(gru, "compiled", None)
    for x, y in zip(got, _layer(a, True, True, 1)):
        assert x.dtype == np.float64
        np.testing.assert_array_equal(x, y)
