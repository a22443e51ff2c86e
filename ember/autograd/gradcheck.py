"""gradcheck / gradgradcheck: analytical gradients against central finite differences.

The numerical Jacobian perturbs one input element at a time (two forward calls each); the
analytical one takes one backward per output element. Both are small-input tools, as in
PyTorch; `fast_mode=True` compares one random projection u^T J v instead (two forwards and
one backward per input/output pair).
"""
import warnings

import numpy as np

from .. import _tensor
from .._dtype import FLOATING, float64
from .._tensor import _wrap
from . import grad   # (ember.autograd imports this module after defining grad)
from .grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,) if not isinstance(x, list) else tuple(x)


def _outputs(func, inputs):
    out = func(*inputs)
    outs = _as_tuple(out)
    return tuple(o for o in outs if isinstance(o, _tensor.Tensor) and o._requires_grad)


def _float_outputs(func, inputs):
    with no_grad():
        outs = _as_tuple(func(*inputs))
    return [o for o in outs if isinstance(o, _tensor.Tensor) and o.dtype.category >= FLOATING]


def _host64(t):
    return np.asarray(t._host(), dtype=np.float64)


def _numerical(func, inputs, k, eps, n_out_sizes):
    """d outputs / d inputs[k] by central differences: one (n_in, n_out) array per output."""
    x = inputs[k]
    data = x._data
    n_in = data.size
    jac = [np.zeros((n_in, m)) for m in n_out_sizes]
    for j, idx in enumerate(np.ndindex(data.shape)):
        orig = data[idx].item()
        data[idx] = orig - eps
        minus = [_host64(o).ravel() for o in _float_outputs(func, inputs)]
        data[idx] = orig + eps
        plus = [_host64(o).ravel() for o in _float_outputs(func, inputs)]
        data[idx] = orig
        for o, (p, m) in enumerate(zip(plus, minus)):
            jac[o][j] = (p - m) / (2 * eps)
    return jac


def _analytical(outputs, diff_inputs):
    """Row j of d out / d input, by one backward with a one-hot cotangent per element."""
    jacs = []  # jacs[o][k]: (n_in_k, n_out_o)
    for o in outputs:
        n = o._data.size
        per_input = [np.zeros((t._data.size, n)) for t in diff_inputs]
        for j in range(n):
            onehot = np.zeros(n, dtype=o.dtype.np)
            onehot[j] = 1
            cot = _wrap(onehot.reshape(o._data.shape), o.dtype)
            if o._device.type != "cpu":
                cot = cot.to(o._device)
            gs = grad(o, diff_inputs, cot, retain_graph=True, allow_unused=True)
            for k, g in enumerate(gs):
                if g is not None:
                    per_input[k][:, j] = _host64(g).ravel()
        jacs.append(per_input)
    return jacs


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _prepare(func, inputs):
    inputs = _as_tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, _tensor.Tensor) and
            t._requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in diff:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          UserWarning, stacklevel=3)
    return inputs, diff


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True when func's analytical gradients match finite differences (raises otherwise,
    or returns False with raise_exception=False)."""
    inputs, diff = _prepare(func, inputs)
    if not check_backward_ad:
        return True
    with enable_grad():
        outputs = _outputs(func, inputs)
    if not outputs:
        for o in _float_outputs(func, inputs):
            if o._data.size:
                return _fail("Numerical gradient for function expected to be zero",
                             raise_exception) if not _zero_numerical(
                                 func, inputs, diff, eps, atol) else True
        return True
    if fast_mode:
        return _fast(func, inputs, diff, outputs, eps, atol, rtol, raise_exception)
    diff_inputs = [inputs[i] for i in diff]
    analytical = _analytical(outputs, diff_inputs)
    sizes = [o._data.size for o in outputs]
    if check_grad_dtypes:
        for o in outputs:
            gs = grad(o.sum(), diff_inputs, retain_graph=True, allow_unused=True)
            for k, g in zip(diff, gs):
                if g is not None and g.dtype is not inputs[k].dtype:
                    return _fail("Gradient has dtype mismatch", raise_exception)
    for pos, k in enumerate(diff):
        numerical = _numerical(func, inputs, k, eps, sizes)
        for o in range(len(outputs)):
            a, n = analytical[o][pos], numerical[o]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(f"Jacobian mismatch for output {o} with respect to input {k},\n"
                             f"numerical:{_show(n)}\nanalytical:{_show(a)}\n",
                             raise_exception)
    return True


def _zero_numerical(func, inputs, diff, eps, atol):
    sizes = [o._data.size for o in _float_outputs(func, inputs)]
    return all(np.allclose(j, 0, atol=atol) for k in diff
               for j in _numerical(func, inputs, k, eps, sizes))


def _show(a):
    return repr(_wrap(a, float64))


def _fast(func, inputs, diff, outputs, eps, atol, rtol, raise_exception):
    """Compare u^T J v (random u, v) numerically and analytically per input/output pair."""
    rng = np.random.default_rng(0)
    us = [rng.standard_normal(o._data.shape) for o in outputs]
    for k in diff:
        x = inputs[k]
        v = rng.standard_normal(x._data.shape)
        orig = x._data.copy()
        x._data[...] = orig - eps * v
        minus = [_host64(o) for o in _float_outputs(func, inputs)]
        x._data[...] = orig + eps * v
        plus = [_host64(o) for o in _float_outputs(func, inputs)]
        x._data[...] = orig
        for o, out in enumerate(outputs):
            numerical = float(((plus[o] - minus[o]) / (2 * eps) * us[o]).sum())
            cot = _wrap(us[o].astype(out.dtype.np), out.dtype)
            g, = grad(out, x, cot, retain_graph=True, allow_unused=True)
            analytical = 0.0 if g is None else float((_host64(g) * v).sum())
            if abs(analytical - numerical) > atol + rtol * abs(numerical):
                return _fail(f"Jacobian mismatch for output {o} with respect to input {k},\n"
                             f"numerical:{numerical}\nanalytical:{analytical}\n\n"
                             "The above quantities relating the numerical and analytical "
                             "jacobians are computed in fast mode.", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """gradcheck of the first derivative: checks double backward."""
    inputs, diff = _prepare(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        with enable_grad():
            outs = _outputs(func, inputs)
        grad_outputs = tuple(
            _wrap(rng.standard_normal(o._data.shape).astype(o.dtype.np), o.dtype)
            .requires_grad_(True) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n], args[n:]
        with enable_grad():
            outs = _outputs(func, ins)
            diff_ins = [ins[i] for i in diff]
            gs = grad(outs, diff_ins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps,
                     atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes,
                     fast_mode=fast_mode)
