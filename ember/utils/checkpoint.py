"""ember.utils.checkpoint (torch.utils.checkpoint): trade compute for memory.

`checkpoint(fn, *args)` runs `fn` without recording its graph (no intermediate activations
are kept) and, during backward, runs it again with the graph on and differentiates that
recomputation. The random state is saved and restored around the recomputation
(preserve_rng_state), so dropout masks repeat and gradients equal the plain ones.

Both `use_reentrant` modes run the same recompute-in-backward scheme; as in PyTorch's
non-reentrant mode, use_reentrant=False also gives parameters their gradients when no input
requires grad.
"""
import contextlib
import warnings

from .. import _creation, autograd, nn
from .._random import get_rng_state, set_rng_state
from .._runtime_settings import get_device_module
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointFunction(Function):
    """The reentrant checkpoint as a Function: `apply(run_function, preserve_rng_state,
    *args)` runs without a graph and recomputes in backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        return _checkpoint_forward(ctx, run_function, preserve_rng_state,
                                   contextlib.nullcontext(), args)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + _recomputed_grads(ctx, grads)


class _RecomputingFunction(Function):
    # (checkpoint()'s own: a recompute context, and a `dummy` leaf that keeps the output
    # in the graph when no input requires grad, as the non-reentrant mode does)
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, recompute_context, dummy, *args):
        return _checkpoint_forward(ctx, run_function, preserve_rng_state,
                                   recompute_context, args)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, None, None) + _recomputed_grads(ctx, grads)


def _checkpoint_forward(ctx, run_function, preserve_rng_state, recompute_context, args):
    ctx.run_function = run_function
    ctx.recompute_context = recompute_context
    ctx.rng_state = get_rng_state() if preserve_rng_state else None
    ctx.inputs = args
    ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
    with no_grad():
        return run_function(*args)


def _recomputed_grads(ctx, grads):
    """Run the function again with the graph on (from the forward's random state) and
    differentiate it: the gradients of ctx's inputs."""
    saved = iter(ctx.saved_tensors)
    inputs = []
    for a in ctx.inputs:
        if isinstance(a, Tensor):
            t = next(saved).detach()
            t.requires_grad_(a.requires_grad)
            inputs.append(t)
        else:
            inputs.append(a)
    current = get_rng_state() if ctx.rng_state is not None else None
    if ctx.rng_state is not None:
        set_rng_state(ctx.rng_state)
    try:
        with enable_grad(), ctx.recompute_context:
            outputs = ctx.run_function(*inputs)
    finally:
        if current is not None:
            set_rng_state(current)
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    pairs = [(o, g) for o, g in zip(outputs, grads)
             if isinstance(o, Tensor) and o.requires_grad and g is not None]
    if not pairs:
        raise RuntimeError("none of output has requires_grad=True, this checkpoint() "
                           "is not necessary")
    autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return tuple(t.grad if isinstance(t, Tensor) else None for t in inputs)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """`function(*args, **kwargs)` whose activations are recomputed during backward.

    NOTE: ember always recomputes the whole function (`early_stop` and the debug flags change
    nothing in the values: they are PyTorch's memory and diagnostics options)."""
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if use_reentrant is False and determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if kwargs:
        fn = function
        function = lambda *a: fn(*a, **kwargs)  # noqa: E731
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        with forward_context:
            return function(*args)
    needs = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if use_reentrant and not needs:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    # A leaf that requires grad makes the output part of the graph even when no input
    # does, so parameters inside `function` still get gradients (non-reentrant semantics).
    dummy = None if use_reentrant else _creation.empty(0, requires_grad=True)
    with forward_context:
        return _RecomputingFunction.apply(function, preserve_rng_state, recompute_context,
                                          dummy, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks; the last
    chunk runs normally (its activations are needed right away)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments
    if segment_size == 0:
        raise ValueError("range() arg 3 must not be zero")

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# --- the rest of torch.utils.checkpoint's public helpers

from ._selective_checkpoint import (  # noqa: E402
    CheckpointPolicy, SelectiveCheckpointContext, create_selective_checkpoint_contexts)


class CheckpointError(RuntimeError):
    """Raised when a checkpointed region's recomputation does not match its forward."""


class DefaultDeviceType:
    """The device type whose random state checkpoint saves besides the CPU's."""

    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def detach_variable(inputs):
    """A tuple of the inputs detached, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def _accelerator_tensors(args):
    found = []

    def visit(a):
        if isinstance(a, Tensor):
            if a.device.type not in ("cpu", "meta"):
                found.append(a)
        elif isinstance(a, (list, tuple)):
            for b in a:
                visit(b)
        elif isinstance(a, dict):
            for b in a.values():
                visit(b)
    visit(args)
    return found


def get_device_states(*args):
    """(device ids, random states) of the accelerator devices the tensors in `args` live on
    (the CPU's state is saved separately); ([], []) for CPU tensors."""
    tensors = _accelerator_tensors(args)
    ids = [t.get_device() for t in tensors]
    if not ids:
        return [], []
    module = get_device_module(tensors[0].device.type)
    states = []
    for index in ids:
        with module.device(index):
            states.append(module.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restore the random states `get_device_states` gave."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = get_device_module(device_type)
    for index, state in zip(devices, states):
        with module.device(index):
            module.set_rng_state(state)


_early_stop = True
_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether recomputation may stop once every needed value is back (PyTorch's memory
    option; ember's recomputation always runs the whole region, so values never differ)."""
    global _early_stop
    previous, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's `debug` flag inside the block (None: leave it to each call)."""
    global _debug_enabled
    previous, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = previous


__all__ += ["CheckpointError", "CheckpointFunction",
            "CheckpointPolicy", "DefaultDeviceType",
            "SelectiveCheckpointContext", "check_backward_validity",
            "create_selective_checkpoint_contexts", "detach_variable", "get_device_states",
            "set_checkpoint_debug_enabled", "set_checkpoint_early_stop", "set_device_states"]
