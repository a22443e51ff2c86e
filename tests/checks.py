"""Shared test helpers: comparisons, finite-difference gradient checks, torch bridges."""
import numpy as np
import pytest

import ember


def to_ember(x, requires_grad=False):
    if isinstance(x, np.ndarray):
        t = ember.tensor(x)
        if requires_grad:
            t.requires_grad_(True)
        return t
    return x


def to_torch(torch, x):
    """A NumPy array as a torch tensor of the same dtype (bfloat16 included)."""
    if isinstance(x, np.ndarray):
        if x.dtype.name == "bfloat16":
            return torch.tensor(x.astype(np.float32)).to(torch.bfloat16)
        return torch.tensor(x)
    return x


def torch_to_numpy(t):
    import torch
    if t.dtype == torch.bfloat16:
        return t.detach().float().numpy()
    return t.detach().resolve_conj().numpy()


def as_numpy(x):
    if isinstance(x, ember.Tensor):
        a = x.detach()._data
        return a.astype(np.float32) if a.dtype.name == "bfloat16" else a
    return np.asarray(x)


def assert_close(actual, expected, atol=1e-5, rtol=1.3e-6, equal_nan=True):
    a, e = as_numpy(actual), np.asarray(expected)
    if e.dtype.name == "bfloat16":
        e = e.astype(np.float32)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if a.dtype == bool or e.dtype == bool or a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_allclose(a, e.astype(a.dtype) if e.dtype.kind != "c" else e,
                                   atol=atol, rtol=rtol, equal_nan=equal_nan)


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]


def numerical_vjp(fn, arrays, index, weights, eps=1e-6):
    """d/d arrays[index] of sum_k <fn(arrays)_k, weights_k>, by central differences."""
    base = arrays[index]
    grad = np.zeros(base.shape, dtype=np.float64)
    for j in np.ndindex(base.shape):
        vals = []
        for sign in (1, -1):
            pert = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
            pert[index][j] += sign * eps
            with ember.no_grad():
                outs = _float_outputs(fn(*[to_ember(a) for a in pert]))
            vals.append(sum(float((as_numpy(o).astype(np.float64) * w).sum())
                            for o, w in zip(outs, weights)))
        grad[j] = (vals[0] - vals[1]) / (2 * eps)
    return grad


def check_grad(fn, arrays, grad_indices=None, atol=1e-5, rtol=1e-3, seed=0):
    """Analytical VJP (ember autograd) against finite differences, in float64."""
    rng = np.random.default_rng(seed)
    if grad_indices is None:
        grad_indices = [i for i, a in enumerate(arrays)
                        if isinstance(a, np.ndarray) and a.dtype == np.float64]
    inputs = [to_ember(a, requires_grad=(i in grad_indices)) for i, a in enumerate(arrays)]
    outs = _float_outputs(fn(*inputs))
    weights = [rng.standard_normal(o.shape) for o in outs]
    loss = sum((o * ember.tensor(w)).sum() for o, w in zip(outs, weights))
    if isinstance(loss, ember.Tensor) and loss.requires_grad:
        grads = ember.autograd.grad(loss, [inputs[i] for i in grad_indices],
                                    allow_unused=True)
    else:
        # NOTE: no graph means ember claims the output does not depend on the inputs; the
        # finite differences below must then be zero too (no early return: it hid ops that
        # dropped their graph).
        grads = [None] * len(grad_indices)
    for i, g in zip(grad_indices, grads):
        expected = numerical_vjp(fn, arrays, i, weights)
        actual = np.zeros_like(expected) if g is None else as_numpy(g)
        np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {i}")


def check_gradgrad(fn, arrays, grad_indices=None, atol=1e-4, rtol=1e-3, seed=1):
    """Finite differences of the first gradient: checks double backward."""
    rng = np.random.default_rng(seed)
    if grad_indices is None:
        grad_indices = [i for i, a in enumerate(arrays)
                        if isinstance(a, np.ndarray) and a.dtype == np.float64]
    probe = [to_ember(a) for a in arrays]
    with ember.no_grad():
        shapes = [o.shape for o in _float_outputs(fn(*probe))]
    weights = [ember.tensor(rng.standard_normal(s)) for s in shapes]
    vs = [rng.standard_normal(arrays[i].shape) for i in grad_indices]

    def first_grad_dot(*args):
        ins = [a.detach().requires_grad_(True) if i in grad_indices and not a.requires_grad
               else a for i, a in enumerate(args)]
        with ember.enable_grad():
            outs = _float_outputs(fn(*ins))
            loss = sum((o * w).sum() for o, w in zip(outs, weights))
            grads = ember.autograd.grad(loss, [ins[i] for i in grad_indices],
                                        create_graph=True, allow_unused=True)
        total = None
        for g, v in zip(grads, vs):
            if g is not None:
                term = (g * ember.tensor(v)).sum()
                total = term if total is None else total + term
        return total if total is not None else ember.tensor(0.0, dtype=ember.float64)

    check_grad(first_grad_dot, arrays, grad_indices, atol=atol, rtol=rtol, seed=seed)


def _has_real_gpu():
    import ember.cuda
    return ember.cuda._probe_cupy()[0]


# Tests that compare ember's CUDA-less behaviour with PyTorch's CPU build run wherever CuPy sees
# no GPU (CI and most machines); on a GPU machine scripts/gpu_check.sh covers the device.
without_gpu = pytest.mark.skipif(_has_real_gpu(), reason="this machine has a CUDA GPU")


LOW_PRECISION = ("float16", "bfloat16")


def op_tolerance(info, dtype):
    """assert_close's tolerances for an op-table entry at `dtype` (loosest for half types)."""
    if dtype in LOW_PRECISION:
        return dict(atol=info.low_precision_tol, rtol=info.low_precision_tol)
    if dtype == "float32":
        return dict(atol=max(info.atol, 1e-5), rtol=max(info.rtol, 1e-5))
    if dtype in ("float64", "complex128"):
        return dict(atol=info.f64_atol, rtol=info.f64_rtol)
    return dict(atol=info.atol, rtol=info.rtol)
