"""Module.__call__ with hooks: forward pre-hooks, forward hooks and full backward hooks.

Full backward hooks follow PyTorch's design: the module's tensor inputs and outputs pass
through one identity node each side, so the gradients w.r.t. the outputs (grad_output) and
w.r.t. the inputs (grad_input) can be seen, and replaced, in one place.
"""
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import state
from ...ops.registry import Op, dispatch
from .module import _global_forward_hooks, _global_forward_pre_hooks


def call_with_hooks(module, args, kwargs):
    for hook_id, hook in list(_global_forward_pre_hooks.items()) + \
            list(module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)

    bw = None
    if (module._backward_hooks or module._backward_pre_hooks) and state.enabled:
        bw = _BackwardHookState(module)
        args = bw.wrap_inputs(args)

    output = module.forward(*args, **kwargs)

    for hook_id, hook in list(_global_forward_hooks.items()) + \
            list(module._forward_hooks.items()):
        if hook_id in module._forward_hooks_with_kwargs:
            result = hook(module, args, kwargs, output)
        else:
            result = hook(module, args, output)
        if result is not None:
            output = result

    if bw is not None:
        output = bw.wrap_outputs(output)
    return output


def _identity_op(name, count, vjp):
    op = Op(name, lambda *arrays: tuple(arrays) if count > 1 else arrays[0],
            name, (), False, count)
    op.vjp = vjp
    return op


class _BackwardHookState:
    def __init__(self, module):
        self.module = module
        self.n_inputs = 0
        self.input_positions = []
        self.grad_outputs = None
        self.inputs_need_grad = False

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(args)
        self.input_positions = positions
        tensors = [args[i] for i in positions]
        self.inputs_need_grad = any(t._requires_grad for t in tensors)
        if not self.inputs_need_grad:
            return args

        def vjp(ctx, *grads):
            grad_input = self._grad_input_tuple(grads)
            result = self._call_hooks(grad_input)
            if result is not None:
                grads = tuple(result[i] for i in positions)
            return grads

        op = _identity_op("BackwardHookFunctionBackward", len(tensors), vjp)
        out = dispatch(op, tuple(tensors))
        out = out if isinstance(out, tuple) else (out,)
        args = list(args)
        for i, t in zip(positions, out):
            args[i] = t
        return tuple(args)

    def _grad_input_tuple(self, grads):
        grad_input = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            grad_input[i] = g
        return tuple(grad_input)

    def _call_hooks(self, grad_input):
        result = None
        for hook in list(self.module._backward_hooks.values()):
            r = hook(self.module, grad_input, self.grad_outputs)
            if r is not None:
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input,"
                                       f" got {len(r)}, but expected {len(grad_input)}")
                grad_input = result = tuple(r)
        return result

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outs = (output,) if single else tuple(output) if isinstance(output, (tuple, list)) \
            else None
        if outs is None:
            return output
        positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and
                     o._requires_grad]
        if not positions:
            return output

        def vjp(ctx, *grads):
            self.grad_outputs = tuple(grads)
            for hook in list(self.module._backward_pre_hooks.values()):
                r = hook(self.module, self.grad_outputs)
                if r is not None:
                    self.grad_outputs = tuple(r)
            if not self.inputs_need_grad:
                if self.module._backward_hooks:
                    warnings.warn("Full backward hook is firing when gradients are computed "
                                  "with respect to module outputs since no inputs require "
                                  "gradients. See https://docs.pytorch.org/docs/main/"
                                  "generated/torch.nn.Module.html#torch.nn.Module."
                                  "register_full_backward_hook for more details.",
                                  stacklevel=5)
                self._call_hooks(tuple(None for _ in range(self.n_inputs)))
            return self.grad_outputs

        op = _identity_op("BackwardHookFunctionBackward", len(positions), vjp)
        wrapped = dispatch(op, tuple(outs[i] for i in positions))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        outs = list(outs)
        for i, t in zip(positions, wrapped):
            outs[i] = t
        return outs[0] if single else type(output)(outs)
