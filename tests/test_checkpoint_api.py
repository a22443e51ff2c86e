"""torch.utils.checkpoint's public surface on ember, against real PyTorch on the same inputs:
recomputation gives torch's gradients (random ops included), CheckpointFunction, selective
checkpoint policies, and the helpers (detach_variable, device states, flags, errors)."""
import functools
import importlib
import inspect
import warnings

import numpy as np
import pytest

import ember

from checks import assert_close


def _ckpt(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def _both(torch_mod, program):
    return program(torch_mod, _ckpt(torch_mod)), program(ember, _ckpt(ember))


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_with_dropout_match_torch(torch_mod, use_reentrant):
    def program(lib, C):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 4)
        x = lib.tensor(X, requires_grad=True)

        def block(a):
            return lib.nn.functional.dropout(layer(a).tanh(), p=0.5, training=True)
        out = C.checkpoint(block, x, use_reentrant=use_reentrant)
        (out * lib.arange(4.0)).sum().backward()
        after = lib.rand(2)   # the stream continues where the forward left it
        return [out.detach().numpy(), x.grad.numpy(), layer.weight.grad.numpy(),
                after.numpy()]
    t, e = _both(torch_mod, program)
    for a, b in zip(e, t):
        assert_close(a, b)


def test_checkpoint_function_apply(torch_mod):
    def program(lib, C):
        x = lib.tensor(X, requires_grad=True)
        y = C.CheckpointFunction.apply(lambda a, k: (a * k).exp(), True, x, 0.5)
        y.sum().backward()
        return type(y.grad_fn).__name__, y.detach().numpy(), x.grad.numpy()
    (tn, ty, tg), (en, ey, eg) = _both(torch_mod, program)
    assert en == tn
    assert_close(ey, ty)
    assert_close(eg, tg)


def test_selective_policy_sees_each_op(torch_mod):
    def program(lib, C):
        x = lib.tensor(X, requires_grad=True)
        calls = []

        def policy(ctx, op, *args, **kwargs):
            # torch names aten overloads ("aten.sin.default"); compare the op's base name
            name = str(op).split(".")[1] if str(op).startswith("aten.") else op.name
            calls.append((name, ctx.is_recompute, tuple(ctx.op_output.shape)))
            return C.CheckpointPolicy.MUST_SAVE if name == "sin" else \
                C.CheckpointPolicy.PREFER_RECOMPUTE
        context_fn = functools.partial(C.create_selective_checkpoint_contexts, policy)
        y = C.checkpoint(lambda a: (a.sin() * a.cos()).sum(), x, use_reentrant=False,
                         context_fn=context_fn)
        y.backward()
        return calls, x.grad.numpy()
    (tc, tg), (ec, eg) = _both(torch_mod, program)
    assert ec == tc
    assert_close(eg, tg)


def test_selective_errors_and_classes(torch_mod):
    def program(lib, C):
        out = []
        with pytest.raises(TypeError) as info:
            C.create_selective_checkpoint_contexts(3)
        out.append(str(info.value))
        with pytest.raises(ValueError) as info:
            C.checkpoint(lambda a: a, lib.ones(1), use_reentrant=False, determinism_check="x")
        out.append(str(info.value))
        out.append([(p.name, p.value) for p in C.CheckpointPolicy])
        ctx = C.SelectiveCheckpointContext(is_recompute=False)
        out.append((ctx.is_recompute, ctx.op_output))
        out.append([k.__name__ for k in C.CheckpointError.__mro__[1:]])
        return out
    t, e = _both(torch_mod, program)
    assert e == t


def test_detach_variable_and_validity(torch_mod):
    def program(lib, C):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = C.detach_variable((x, 3, lib.ones(1)))
        with pytest.raises(RuntimeError) as info:
            C.detach_variable([x])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            C.check_backward_validity([lib.ones(1), 2])
            C.check_backward_validity([x])
        return ([getattr(v, "requires_grad", v) for v in d], d[0] is x,
                d[0].grad_fn is None, str(info.value), [str(w.message) for w in caught])
    t, e = _both(torch_mod, program)
    assert e == t


def test_device_states_and_flags(torch_mod):
    def program(lib, C):
        x = lib.ones(2)
        states = C.get_device_states(x, [x], {"a": 3})
        C.set_device_states([], [])
        with C.set_checkpoint_early_stop(False):
            with C.set_checkpoint_debug_enabled(True):
                y = C.checkpoint(lambda a: a * 2, lib.ones(2, requires_grad=True),
                                 use_reentrant=False)
        before = C.DefaultDeviceType.get_device_type()
        C.DefaultDeviceType.set_device_type("cuda")
        after = C.DefaultDeviceType.get_device_type()
        C.DefaultDeviceType.set_device_type(before)
        return states, y.detach().numpy().tolist(), after
    t, e = _both(torch_mod, program)
    assert e == t


def test_signatures_match_torch(torch_mod):
    tc, ec = _ckpt(torch_mod), _ckpt(ember)
    for name in ["checkpoint", "create_selective_checkpoint_contexts", "detach_variable",
                 "get_device_states", "set_device_states", "set_checkpoint_early_stop",
                 "set_checkpoint_debug_enabled", "check_backward_validity"]:
        tp = list(inspect.signature(getattr(tc, name)).parameters)
        ep = list(inspect.signature(getattr(ec, name)).parameters)
        assert ep == tp, name


def test_device_states_on_a_standin_gpu(cuda_standin):
    """On CUDA tensors (the NumPy stand-in with two devices), get_device_states gives each
    tensor's device and that device's generator state; set_device_states restores them, so
    a draw after restoring repeats the draw after saving (the rule PyTorch documents)."""
    C = _ckpt(ember)
    a = ember.ones(2, device="cuda:0")
    b = ember.ones(2, device="cuda:1")
    ids, states = C.get_device_states(a, [b], {"cpu": ember.ones(1)})
    assert ids == [0, 1]
    first = [ember.rand(3, device=f"cuda:{i}").tolist() for i in ids]
    ember.rand(5, device="cuda:1")   # device 1 moves on further than device 0
    C.set_device_states(ids, states)
    again = [ember.rand(3, device=f"cuda:{i}").tolist() for i in ids]
    assert again == first
