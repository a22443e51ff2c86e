"""autograd.functional: vjp, jvp, jacobian, hessian, hvp, vhp on a user function.

Everything is built from `autograd.grad`: a Jacobian is one VJP per output element (PyTorch
does the same without vectorize); forward products use the double-backward trick (the VJP is
linear in its cotangent, so differentiating it with respect to that cotangent gives a JVP).
"""
from .. import _creation   # (factories read at call time: ember.compile patches them)
from .. import _tensor
from .._tensor import _wrap
from ..backends import array_module
from . import grad   # (ember.autograd imports this module after defining grad)
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, arg_name, fn_name):
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, _tensor.Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or "
                                f"a tuple of Tensors but the value at index {i} has type "
                                f"{type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the given {arg_name} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, is_tuple):
    """Undo _as_tuple: `is_tuple` is one flag, or two (outputs, inputs) for nested results."""
    if isinstance(is_tuple, tuple):
        if not is_tuple[1]:
            res = tuple(el[0] for el in res)
        if not is_tuple[0]:
            res = res[0]
    elif not is_tuple:
        res = res[0]
    return res


def _prepare(inputs, create_graph):
    """Fresh leaves for the inputs (views when create_graph keeps them connected)."""
    out = []
    for t in inputs:
        if create_graph and t._requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _finish(values, create_graph):
    if isinstance(values, tuple):
        return tuple(_finish(v, create_graph) for v in values)
    if values is None or create_graph:
        return values
    return values.detach()


def _grads(outputs, inputs, grad_outputs, create_graph, strict, what):
    """autograd.grad with zeros (or strict mode's error) for inputs the outputs ignore."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o._requires_grad]
    if pairs:
        res = grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                   retain_graph=True, create_graph=create_graph, allow_unused=True)
    else:
        res = (None,) * len(inputs)
    out = []
    for i, (t, g) in enumerate(zip(inputs, res)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode{what}.")
            g = _creation.zeros_like(t)
        out.append(g)
    return tuple(out)


def _call(func, inputs, fn_name):
    with enable_grad():
        outputs = func(*inputs)
    return _as_tuple(outputs, "outputs of the user-provided function", fn_name)


def _validate_v(v, outputs, is_outputs_tuple, fn_name, what="outputs"):
    if v is None:
        if len(outputs) != 1 or outputs[0]._data.size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        return (_creation.ones_like(outputs[0]),)
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(outputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but got "
                           f"{len(v)}.")
    for i, (a, b) in enumerate(zip(v, outputs)):
        if a._data.shape != b._data.shape:
            raise RuntimeError(f"Entry {i} in v has invalid size: should be "
                               f"{_size(b)} but got {_size(a)}.")
    return v


def _size(t):
    return "torch.Size([" + ", ".join(map(str, t._data.shape)) + "])"


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    inputs = _prepare(inputs, create_graph)
    is_outputs_tuple, outputs = _call(func, inputs, "vjp")
    v = _validate_v(v, outputs, is_outputs_tuple, "vjp")
    res = _grads(outputs, inputs, v, create_graph, strict, "")
    return (_tuple_postprocess(_finish(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_finish(res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    inputs = _prepare(inputs, create_graph)
    if v is None:
        if len(inputs) != 1 or inputs[0]._data.size != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        v = (_creation.ones_like(inputs[0]),)
    else:
        _, v = _as_tuple(v, "v", "jvp")
        for i, (a, b) in enumerate(zip(v, inputs)):
            if a._data.shape != b._data.shape:
                raise RuntimeError(f"Entry {i} in v has invalid size: should be {_size(b)} "
                                   f"but got {_size(a)}.")
    is_outputs_tuple, outputs = _call(func, inputs, "jvp")
    cotangents = tuple(_creation.zeros_like(o).requires_grad_(True) for o in outputs)
    grads = _grads(outputs, inputs, cotangents, True, strict, "")
    used = [(g, w) for g, w in zip(grads, v) if g._requires_grad]
    res = _grads(tuple(g for g, _ in used), cotangents, tuple(w for _, w in used),
                 create_graph, strict, "") if used else \
        tuple(_creation.zeros_like(o) for o in outputs)
    return (_tuple_postprocess(_finish(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_finish(res, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs: shape output.shape + input.shape per (output, input)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         'Hint: If your function has more outputs than inputs, "forward-mode" '
                         'tends to be more performant. Otherwise, prefer to use '
                         '"reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("torch.autograd.functional.jacobian: `strategy=\"forward-"
                                  "mode\"` is only implemented together with `vectorize=True`.")
    from ..ops.shape import stack   # (cycle: ember.autograd loads before the ops)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = _prepare(inputs, create_graph)
    is_outputs_tuple, outputs = _call(func, inputs, "jacobian")
    jac = []
    for i, out in enumerate(outputs):
        n = out._data.size
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for j in range(n):
            if out._requires_grad:
                gs = grad((flat,), inputs, (_one_hot(n, j, out),), retain_graph=True,
                          create_graph=create_graph, allow_unused=True)
            else:
                gs = (None,) * len(inputs)
            for k, (t, g) in enumerate(zip(inputs, gs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {k}. This is not allowed "
                                           "in strict mode.")
                    g = _creation.zeros(t._data.shape, dtype=t.dtype, device=t._device)
                rows[k].append(g)
        per_input = []
        for k, t in enumerate(inputs):
            shape = tuple(out._data.shape) + tuple(t._data.shape)
            if n == 0:
                per_input.append(_creation.zeros(shape, dtype=t.dtype, device=t._device))
                continue
            per_input.append(stack(rows[k]).reshape(shape))
        jac.append(tuple(per_input))
    jac = _finish(tuple(jac), create_graph)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _one_hot(n, j, like):
    xp = array_module(like._data)
    a = xp.zeros(n, dtype=like.dtype.np)
    a[j] = 1
    return _wrap(a, like.dtype, like._device)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """Second derivatives of a scalar function: shape input.shape + input.shape."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        _, out = _call(func, inp, "hessian")
        if len(out) != 1 or out[0]._data.size != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element.")
        return jacobian(func, inp, create_graph=True, strict=strict)

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function (H is symmetric: the same as v^T H)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        for i, (a, b) in enumerate(zip(v, inputs)):
            if a._data.shape != b._data.shape:
                raise RuntimeError(f"Entry {i} in v has invalid size: should be {_size(b)} "
                                   f"but got {_size(a)}.")
    elif len(inputs) != 1 or inputs[0]._data.size != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    else:
        v = (_creation.ones_like(inputs[0]),)
    _, outputs = _call(func, inputs, name)
    if len(outputs) != 1:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0]._data.size != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           "contain a single element")
    jac = _grads(outputs, inputs, (_creation.ones_like(outputs[0]),), True, strict, "")
    used = [(g, w, k) for k, (g, w) in enumerate(zip(jac, v)) if g._requires_grad]
    if used:
        res = _grads(tuple(g for g, _, _ in used), inputs, tuple(w for _, w, _ in used),
                     create_graph, strict, "")
    else:
        res = tuple(_creation.zeros_like(t) for t in inputs)
    return (_finish(outputs[0], create_graph),
            _tuple_postprocess(_finish(res, create_graph), is_inputs_tuple))
