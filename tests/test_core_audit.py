"""The core issue's checklist, audited against real torch: the bad-input list (PyTorch's exact
wording), in-place ops through views (CopySlices / AsStridedBackward0), in-place view methods,
and the small API gaps the audit found (detach(), Tensor.tile(*dims), `in`, bare @no_grad,
Variable, alpha/bool-subtraction checks, silent NumPy warnings); and source audits of the
package (version counters are written only by the in-place protocol)."""
import os
import re
import warnings

import numpy as np
import pytest

import ember


def same_error(e_fn, t_fn):
    """Both raise the same exception type with the same text (module names aside); ember may
    add a line saying more (which of CuPy or a GPU is missing, say)."""
    with pytest.raises(Exception) as t_exc:
        t_fn()
    with pytest.raises(type(t_exc.value)) as e_exc:
        e_fn()
    text, want = str(e_exc.value), str(t_exc.value)
    assert text.replace("ember", "torch") == want or text.startswith(want + "\n(ember: ")


def _twice(m):
    y = (m.ones(2, requires_grad=True) * m.ones(2, requires_grad=True)).sum()
    y.backward()
    y.backward()


def _modified(m):
    y = m.ones(2, requires_grad=True) * 1
    z = y.sin()  # saves its input
    y.add_(1)
    z.sum().backward()


# The bad-input list, plus near relatives; each lambda takes the module.
BAD = {
    "broadcast": lambda m: m.ones(2, 3) + m.ones(2, 4),
    "broadcast_inplace": lambda m: m.ones(2, 3).add_(m.ones(2, 4)),
    "broadcast_where": lambda m: m.where(m.ones(2, 3) > 0, m.ones(2, 4), 0.0),
    "matmul": lambda m: m.ones(2, 3) @ m.ones(4, 5),
    "mm": lambda m: m.mm(m.ones(2, 3), m.ones(4, 5)),
    "matmul_1d": lambda m: m.ones(3) @ m.ones(4),
    "matmul_2d_1d": lambda m: m.ones(2, 3) @ m.ones(4),
    "matmul_batch_dims": lambda m: m.ones(2, 2, 3) @ m.ones(3, 4, 5),
    "matmul_batch_inner": lambda m: m.ones(2, 2, 3) @ m.ones(2, 4, 5),
    "bmm": lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5)),
    "linear": lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(5, 4)),
    "view": lambda m: m.ones(2, 3).view(4),
    "view_stride": lambda m: m.ones(2, 3).t().view(6),
    "reshape": lambda m: m.ones(2, 3).reshape(4, -1),
    "index": lambda m: m.ones(2, 3)[2],
    "index_dim1": lambda m: m.ones(2, 3)[0, 3],
    "index_tensor": lambda m: m.ones(2, 3)[m.tensor([5])],
    "index_0d": lambda m: m.tensor(1.0)[0],
    "too_many_indices": lambda m: m.ones(2, 3)[0, 0, 0],
    "setitem_oob": lambda m: m.ones(2, 3).__setitem__(2, 1.0),
    "backward_nonscalar": lambda m: (m.ones(2, requires_grad=True) * 2).backward(),
    "grad_nonscalar": lambda m: (lambda x: m.autograd.grad(x * 2, x))(
        m.ones(2, requires_grad=True)),
    "backward_twice": _twice,
    "modified_inplace": _modified,
    "inplace_leaf": lambda m: m.ones(2, requires_grad=True).add_(1),
    "inplace_leaf_operator": lambda m: m.ones(2, requires_grad=True).__iadd__(1),
    "inplace_leaf_setitem": lambda m: m.ones(2, requires_grad=True).__setitem__(0, 1.0),
    "inplace_leaf_view": lambda m: m.ones(2, requires_grad=True)[0].add_(1),
    "inplace_multi_view": lambda m: (m.ones(3, 4, requires_grad=True) * 1).split(2, 1)[1]
    .mul_(2),
    "devices_cuda": lambda m: m.ones(2) + m.ones(2, device="cuda"),
    "cuda_tensor": lambda m: m.zeros(2, device="cuda"),
    "cuda_method": lambda m: m.zeros(2).cuda(),
    "int_iadd_float": lambda m: m.ones(2, dtype=m.int64).__iadd__(1.5),
    "out_with_grad": lambda m: m.add(m.ones(2, requires_grad=True), 1, out=m.ones(2)),
    "alpha_float_int": lambda m: m.add(m.tensor([1, 2]), m.tensor([1, 2]), alpha=0.5),
    "alpha_bool": lambda m: m.tensor([1, 2]).sub(1, alpha=True),
    "alpha_complex": lambda m: m.add(m.ones(2), 1, alpha=1j),
    "sub_bool_scalar": lambda m: m.tensor([1, 2]) - True,
    "sub_bool_tensor_int": lambda m: m.tensor([True, False]) - 1,
    "sub_two_bools": lambda m: m.tensor([True]) - m.tensor([False]),
    "requires_grad_int": lambda m: m.tensor([1, 2]).requires_grad_(),
    "requires_grad_attr_int": lambda m: setattr(m.tensor([1, 2]), "requires_grad", True),
    "grad_output_not_rg": lambda m: m.autograd.grad(m.ones(2).sum(), m.ones(2)),
    "contains_str": lambda m: "a" in m.tensor([1, 2]),
    "matmul_list": lambda m: m.ones(3) @ [1.0, 2.0, 3.0],
    "rmatmul_list": lambda m: [1.0, 2.0, 3.0] @ m.ones(3),
    "norm_bad_order": lambda m: m.norm(m.ones(2, 2), "abc"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_matches_torch(name, torch_mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda: BAD[name](ember), lambda: BAD[name](torch_mod))


def test_mixing_devices_message():
    from ember.ops.registry import _device_error
    # a CPU tensor against one on another device: PyTorch's text, naming both devices
    msg = str(_device_error(ember.device("cpu"), ember.device("cuda", 0)))
    assert msg == ("Expected all tensors to be on the same device, but found at least two "
                   "devices, cpu and cuda:0!")


# ---------------------------------------------------------------------- in-place via views
def _run(m, body):
    x = m.tensor(np.arange(1.0, 13.0).reshape(3, 4), requires_grad=True)
    w = m.tensor(np.linspace(0.5, 2.0, 4), requires_grad=True)
    out = body(m, x, w)
    weights = m.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))
    (out * weights).sum().backward()
    return out.detach().numpy(), x.grad.numpy(), None if w.grad is None else w.grad.numpy()


def _then(first, result):
    return result


VIEW_BODIES = {
    "slice_mul_": lambda m, x, w: (lambda y: _then(y[1:].mul_(2), y))(x * 1),
    "row_add_": lambda m, x, w: (lambda y: _then(y[0].add_(w), y))(x * 1),
    "column_mul_": lambda m, x, w: (lambda y: _then(y[:, 1].mul_(w[:3]), y))(x * 1),
    "transposed_exp_": lambda m, x, w: (lambda y: _then(y.t()[1:].exp_(), y))(x * 0.1),
    "diagonal_copy_": lambda m, x, w: (lambda y: _then(y.diagonal().copy_(w[:3]), y))(x * 1),
    "view_chain": lambda m, x, w: (lambda y: _then(
        y.view(12)[2:8].view(2, 3)[:, 1].sin_(), y))(x * 1),
    "stale_view": lambda m, x, w: (lambda y: (lambda v: _then(y.mul_(w), v * v))(y[:2]))(
        x * 1),
    "stale_via_sibling": lambda m, x, w: (lambda y: (lambda a, b: _then(
        b.mul_(3), a + y.sum()))(y[:2], y[1:]))(x * 1),
    "use_modified_view": lambda m, x, w: (lambda y: (lambda v: _then(v.mul_(2), v * v))(
        y[1:]))(x * 1),
    "fortran_order_root": lambda m, x, w: (lambda y: _then(y[1].mul_(w), y))(
        (x.t() * 1).t()),
    "setitem_on_view": lambda m, x, w: (lambda y: _then(
        y[1:].__setitem__((slice(None), 0), w[:2]), y))(x * 1),
    "unsqueeze_view": lambda m, x, w: (lambda y: _then(y.unsqueeze(0)[0, 1].mul_(5), y))(
        x * 1),
}


@pytest.mark.parametrize("name", sorted(VIEW_BODIES))
def test_inplace_through_views_gradients(name, torch_mod):
    got = _run(ember, VIEW_BODIES[name])
    want = _run(torch_mod, VIEW_BODIES[name])
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_inplace_view_graph_names_and_nograd_base(torch_mod):
    for m in (ember, torch_mod):
        y = m.ones(3, requires_grad=True) * 1
        y[1:].mul_(2)
        names = (y.grad_fn.name(), type(y[1:].grad_fn).__name__ if m is torch_mod else
                 y[1:].grad_fn.name(), repr(y.grad_fn).split()[0])
        if m is ember:
            got = names
        else:
            want = names
    assert got[0] == want[0] == "torch::autograd::CopySlices"
    assert got[2] == want[2] == "<CopySlices"
    # a base that did not require grad starts to, through CopySlices, as in PyTorch
    out = []
    for m in (ember, torch_mod):
        z, w = m.zeros(3), m.ones(2, requires_grad=True)
        z[1:].add_(w * 3)
        (z * z).sum().backward()
        out.append((z.requires_grad, w.grad.tolist()))
    assert out[0] == out[1]


def test_double_backward_through_view_inplace(torch_mod):
    grads = []
    for m in (ember, torch_mod):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        y[1:].mul_(x[1:])
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        grads.append((g.tolist(), x.grad.tolist()))
    assert grads[0] == grads[1]


def _version(m, t):
    return t._version   # an int in both (ember's views share the counter object `_vc`)


def _strides(t):
    # NumPy and PyTorch disagree on the (meaningless) stride of a size-1 dimension
    return tuple(s for s, n in zip(t.stride(), t.shape) if n != 1)


@pytest.mark.parametrize("call", ["squeeze_()", "squeeze_(1)", "squeeze_((1,))",
                                  "unsqueeze_(0)", "transpose_(0, 2)", "swapaxes_(0, 2)",
                                  "swapdims_(0, 1)"])
def test_inplace_view_methods(call, torch_mod):
    res = []
    for m in (ember, torch_mod):
        x = m.tensor(np.arange(6.0).reshape(2, 1, 3), requires_grad=True)
        y = x * 1
        same = eval("y." + call) is y
        (y * m.arange(float(y.numel())).reshape(tuple(y.shape))).sum().backward()
        plain = m.zeros(2, 1, 3)
        before = _version(m, plain)
        eval("plain." + call)
        res.append((same, tuple(y.shape), _strides(y), y.grad_fn.name(), x.grad.tolist(),
                    tuple(plain.shape), _version(m, plain) - before))
    assert res[0] == res[1]


def test_t_inplace_and_leaf_error(torch_mod):
    for m in (ember, torch_mod):
        a = m.ones(2, 3)
        assert a.t_() is a and tuple(a.shape) == (3, 2) and a.stride() == (1, 3)
    same_error(lambda: ember.ones(2, 3, requires_grad=True).t_(),
               lambda: torch_mod.ones(2, 3, requires_grad=True).t_())


# ---------------------------------------------------------------------- API gaps
def test_detach_function_tile_varargs_contains(torch_mod):
    for m in (ember, torch_mod):
        x = m.ones(2, requires_grad=True)
        d = m.detach(x)
        assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    a = np.arange(6.0).reshape(2, 3)
    assert ember.tensor(a).tile(2, 1, 2).tolist() == torch_mod.tensor(a).tile(2, 1, 2).tolist()
    assert ember.tile(ember.tensor(a), (2,)).tolist() == \
        torch_mod.tile(torch_mod.tensor(a), (2,)).tolist()
    for m in (ember, torch_mod):
        t = m.tensor([[1, 2], [3, 4]])
        assert (2 in t, 7 in t, m.tensor([3, 4]) in t, m.tensor([4, 3]) in t,
                np.int64(4) in t) == (True, False, True, False, True)


def test_bare_grad_mode_decorators_and_variable(torch_mod):
    for m in (ember, torch_mod):
        x = m.ones(1, requires_grad=True)

        @m.no_grad
        def f():
            return (x * 2).requires_grad

        @m.enable_grad
        def g():
            return (x * 2).requires_grad

        assert f() is False
        with m.no_grad():
            assert g() is True
        assert m.is_grad_enabled()
        assert isinstance(m.ones(1), m.autograd.Variable)
        v = m.autograd.Variable(m.ones(2), requires_grad=True)
        assert type(v) is m.Tensor and v.requires_grad


def test_alpha_and_bool_subtraction_values(torch_mod):
    for m in (ember, torch_mod):
        i = m.tensor([1, 2])
        assert m.add(i, i, alpha=3).tolist() == [4, 8]
        assert m.add(m.tensor([True, False]), m.tensor([True, True]), alpha=True).tolist() == \
            [True, True]
        assert m.sub(m.ones(2), 1, alpha=0.5).tolist() == [0.5, 0.5]


def test_norm_nuclear(torch_mod):
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    for args in (("nuc",), ("nuc", (1, 2)), ("nuc", (0, 2), True)):
        x = a[0] if len(args) == 1 else a
        got = ember.norm(ember.tensor(x), *args)
        want = torch_mod.norm(torch_mod.tensor(x), *args)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    x = ember.tensor(a[0], requires_grad=True)
    ember.norm(x, "nuc").backward()
    tx = torch_mod.tensor(a[0], requires_grad=True)
    torch_mod.norm(tx, "nuc").backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-8)


def test_no_numpy_runtime_warnings_from_ember(torch_mod):
    # NOTE: in a fresh interpreter: pytest resets the warning filters ember installs at import
    import subprocess
    import sys
    code = (
        "import warnings, numpy as np, ember\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.filterwarnings('always', category=RuntimeWarning, module='__main__')\n"
        "    r = [ember.tensor([1.0, 0.0, -1.0]) / 0, ember.log(ember.tensor([0.0, -1.0])),\n"
        "         ember.tensor([1e5]).half() * 1e5, ember.tensor([300.0]).to(ember.int8)]\n"
        "    n_ember = len(w)\n"
        "    np.log(np.zeros(1))\n"
        "print(n_ember, len(w) - n_ember)\n"
        "print('|'.join(str(x) for x in r))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root).stdout.splitlines()
    assert out[0] == "0 1"  # none from ember; the user's own NumPy call keeps its warning
    want = [torch_mod.tensor([1.0, 0.0, -1.0]) / 0, torch_mod.log(torch_mod.tensor([0.0, -1.0])),
            torch_mod.tensor([1e5]).half() * 1e5, torch_mod.tensor([300.0]).to(torch_mod.int8)]
    assert out[1].replace("ember", "torch") == "|".join(str(x) for x in want)


# ---------------------------------------------------------------------- PyTorch-visible details
ARRAY_OPERANDS = {
    "add": lambda t, a: t + a, "sub": lambda t, a: t - a, "mul 2-D": lambda t, a: t * a[:, None],
    "div": lambda t, a: t / a, "pow": lambda t, a: t ** a, "floordiv": lambda t, a: t // a,
    "mod": lambda t, a: t % a, "eq": lambda t, a: t == a, "float32 array": lambda t, a:
    t + a.astype(np.float32), "int array": lambda t, a: t * a.astype(np.int64),
    "0-d array": lambda t, a: t + np.array(2.0),
}


@pytest.mark.parametrize("case", list(ARRAY_OPERANDS))
def test_numpy_array_operands_as_pytorch(case, torch_mod):
    """A Tensor's operators read a NumPy array as a tensor (dtype promotion included)."""
    a = np.array([1.5, 2.0, 3.0])
    got = ARRAY_OPERANDS[case](ember.tensor([1.0, 4.0, -2.0]), a)
    want = ARRAY_OPERANDS[case](torch_mod.tensor([1.0, 4.0, -2.0]), a)
    assert str(got.dtype).replace("ember", "torch") == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_version_counter_and_grad_fn_class_as_pytorch(torch_mod):
    def run(m):
        x = m.zeros(4)
        v = x[1:]
        versions = [x._version]
        v.add_(1)
        x.mul_(2)
        versions += [x._version, v._version, type(x._version).__name__]
        w = m.ones(3, requires_grad=True)
        y = ((w * 2).exp().sum(0) + 1).sigmoid()
        names, fn = [], y.grad_fn
        while fn is not None and fn.next_functions:
            names.append(type(fn).__name__)
            fn = fn.next_functions[0][0]
        return versions, names
    assert run(ember) == run(torch_mod)


# ---------------------------------------------------------------------- source audits
_VERSION_WRITE = re.compile(r"_vc\.v\s*(?:[-+]=|=(?!=))")


def version_writes(package):
    """`path:line` of each write to a version counter in the .py files under `package`,
    except the in-place protocol's own (ember/_inplace.py)."""
    found = []
    for folder, dirs, files in os.walk(package):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, os.path.dirname(package))
            if rel == os.path.join("ember", "_inplace.py"):
                continue
            with open(path, encoding="utf-8") as f:
                found += [f"{rel}:{n}: {line.strip()}" for n, line in enumerate(f, 1)
                          if _VERSION_WRITE.search(line)]
    return found


def test_version_counters_bumped_only_by_the_inplace_protocol(tmp_path):
    """Autograd trusts a saved tensor's version only if every write goes through one door:
    ember._inplace.bump_version (issue 27)."""
    fake = tmp_path / "ember" / "ops"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("x = 1\nt._vc.v += 1\nok = t._vc.v == 2\nt._vc.v = 0\n")
    (tmp_path / "ember" / "_inplace.py").write_text("t._vc.v += 1\n")
    bad = os.path.join("ember", "ops", "bad.py")
    assert version_writes(str(tmp_path / "ember")) == [
        f"{bad}:2: t._vc.v += 1", f"{bad}:4: t._vc.v = 0"]   # (the audit itself can fail)
    found = version_writes(os.path.dirname(ember.__file__))
    assert not found, ("version counters written outside ember/_inplace.py (call "
                       "ember._inplace.bump_version instead):\n" + "\n".join(found))
