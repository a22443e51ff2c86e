"""Generic tests driven by the op table (tests/op_db): every entry is checked forward
against NumPy and real PyTorch, by float64 gradcheck and gradgradcheck, and in place."""
import numpy as np
import pytest

import ember
from checks import (LOW_PRECISION as LOW, assert_close, check_grad, check_gradgrad,
                    op_tolerance, to_ember, to_torch, torch_to_numpy)
from op_db import all_ops

OPS = all_ops()


def _cases(predicate=lambda info, dtype: True):
    return [pytest.param(info, d, id=f"{info.name}-{d}") for info in OPS for d in info.dtypes
            if predicate(info, d)]


def _ref_args(args, dtype):
    # NOTE: low-precision references run in float32; the op must agree to rounding.
    if dtype in LOW:
        return tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args)
    return args


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("info,dtype", _cases(lambda i, d: i.ref is not None))
def test_forward_matches_numpy(info, dtype):
    rng = np.random.default_rng(0)
    for sample in info.samples(rng, dtype):
        args = [to_ember(a) for a in sample.args]
        actual = _outputs(info.op(ember, *args, **sample.kwargs))
        with np.errstate(all="ignore"):
            expected = _outputs(info.ref(*_ref_args(sample.args, dtype), **sample.kwargs))
        for a, e in zip(actual, expected):
            assert_close(a, e, **op_tolerance(info, dtype))


@pytest.mark.parametrize("info,dtype", _cases())
def test_matches_torch(info, dtype, torch_mod):
    """Values, dtype and shape equal real PyTorch's on the same inputs (or both raise)."""
    rng = np.random.default_rng(1)
    for sample in info.samples(rng, dtype):
        args = [to_ember(a) for a in sample.args]
        targs = [to_torch(torch_mod, a) for a in sample.args]
        try:
            expected = _outputs(info.torch_call(torch_mod, *targs, **sample.kwargs))
        except Exception as exc:
            with pytest.raises(type(exc)):
                info.op(ember, *args, **sample.kwargs)
            continue
        actual = _outputs(info.op(ember, *args, **sample.kwargs))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            if not isinstance(e, torch_mod.Tensor):
                assert a == e
                continue
            assert str(a.dtype).replace("ember", "torch") == str(e.dtype), info.name
            assert tuple(a.shape) == tuple(e.shape)
            assert_close(a, torch_to_numpy(e), **op_tolerance(info, dtype))


def _float64_samples(info):
    rng = np.random.default_rng(2)
    return [s for s in info.samples(rng, "float64")]


@pytest.mark.parametrize("info", [pytest.param(i, id=i.name) for i in OPS if i.grad])
def test_gradcheck(info):
    for sample in _float64_samples(info):
        if any(isinstance(a, np.ndarray) and a.size > 60 for a in sample.args):
            continue  # keep finite differences cheap
        check_grad(lambda *a: info.op(ember, *a, **sample.kwargs), list(sample.args),
                   sample.grad, atol=info.grad_atol, rtol=info.grad_rtol)


def _largest_arg(sample):
    return max([a.size for a in sample.args if isinstance(a, np.ndarray)], default=0)


@pytest.mark.parametrize("info", [pytest.param(i, id=i.name) for i in OPS
                                  if i.grad and i.gradgrad])
def test_gradgradcheck(info):
    samples = _float64_samples(info)
    # Finite differences of a gradient cost 2 * size double-backward runs: small samples only,
    # but never none (the smallest one then), so every twice-differentiable op is checked.
    chosen = [s for s in samples[:3] if _largest_arg(s) <= 24]
    if not chosen:
        chosen = [min(samples, key=_largest_arg)]
    for sample in chosen:
        check_gradgrad(lambda *a: info.op(ember, *a, **sample.kwargs), list(sample.args),
                       sample.grad, atol=max(info.grad_atol, 1e-4), rtol=info.grad_rtol)


# In-place calls where torch 2.13 does something ember deliberately does not copy, by
# (op name, dtype, shape of x or None for any): the reason is in the comment.
_INPLACE_KNOWN = {
    # torch's addbmm_ resizes a (2,) self to the (3, 2) result instead of raising, unlike
    # addmm_/baddbmm_ ("Bad in-place call"); ember raises as those do.
    ("addbmm", "float32", (2,)), ("addbmm", "float64", (2,)),
    # torch raises NotImplementedError ("cumsum_out_cpu" not implemented for 'Bool') before
    # its cast check; ember raises the cast check's RuntimeError (Long can't be cast to Bool).
    ("cumsum", "bool", None),
}


@pytest.mark.parametrize("info,dtype", _cases(lambda i, d: i.inplace is not None))
def test_inplace_variant(info, dtype, torch_mod):
    """x.op_(y) against torch's x.op_(y): the same error where the result cannot be cast to
    x's dtype or broadcast to x's shape, else the same values written into x's storage, with
    the version bumped and views of x seeing them."""
    rng = np.random.default_rng(3)
    for sample in info.samples(rng, dtype):
        x = sample.args[0]
        if not isinstance(x, np.ndarray) or {(info.name, dtype, x.shape),
                                             (info.name, dtype, None)} & _INPLACE_KNOWN:
            continue
        t_target = to_torch(torch_mod, x)
        t_args = [to_torch(torch_mod, a) for a in sample.args[1:]]
        target = to_ember(x)
        args = [to_ember(a) for a in sample.args[1:]]
        try:
            getattr(t_target, info.inplace)(*t_args, **sample.kwargs)
        except Exception as exc:
            with pytest.raises(type(exc)):
                getattr(target, info.inplace)(*args, **sample.kwargs)
            continue
        alias = target.view(target.shape) if target.is_contiguous() else target
        version = target._vc.v
        out = getattr(target, info.inplace)(*args, **sample.kwargs)
        assert out is target
        assert target._vc.v == version + 1
        assert str(target.dtype).replace("ember", "torch") == str(t_target.dtype)
        assert tuple(target.shape) == tuple(t_target.shape)
        assert_close(alias, torch_to_numpy(t_target), **op_tolerance(info, dtype))
