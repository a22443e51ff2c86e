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

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _function_class():
    from ..autograd.function import Function

    class CheckpointFunction(Function):
        @staticmethod
        def forward(ctx, run_function, preserve_rng_state, recompute_context, dummy, *args):
            import ember
            ctx.run_function = run_function
            ctx.recompute_context = recompute_context
            ctx.rng_state = ember.get_rng_state() if preserve_rng_state else None
            ctx.inputs = args
            ctx.save_for_backward(*[a for a in args if isinstance(a, ember.Tensor)])
            with ember.no_grad():
                return run_function(*args)

        @staticmethod
        def backward(ctx, *grads):
            import ember
            saved = iter(ctx.saved_tensors)
            inputs = []
            for a in ctx.inputs:
                if isinstance(a, ember.Tensor):
                    t = next(saved).detach()
                    t.requires_grad_(a.requires_grad)
                    inputs.append(t)
                else:
                    inputs.append(a)
            current = ember.get_rng_state() if ctx.rng_state is not None else None
            if ctx.rng_state is not None:
                ember.set_rng_state(ctx.rng_state)
            try:
                with ember.enable_grad(), ctx.recompute_context:
                    outputs = ctx.run_function(*inputs)
            finally:
                if current is not None:
                    ember.set_rng_state(current)
            if isinstance(outputs, ember.Tensor):
                outputs = (outputs,)
            pairs = [(o, g) for o, g in zip(outputs, grads)
                     if isinstance(o, ember.Tensor) and o.requires_grad and g is not None]
            if not pairs:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() "
                                   "is not necessary")
            ember.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
            return (None, None, None, None) + tuple(
                t.grad if isinstance(t, ember.Tensor) else None for t in inputs)
    return CheckpointFunction


_cls = []


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """`function(*args, **kwargs)` whose activations are recomputed during backward."""
    import ember
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
    if not ember.is_grad_enabled():
        with forward_context:
            return function(*args)
    needs = any(isinstance(a, ember.Tensor) and a.requires_grad for a in args)
    if use_reentrant and not needs:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    # A leaf that requires grad makes the output part of the graph even when no input
    # does, so parameters inside `function` still get gradients (non-reentrant semantics).
    dummy = None if use_reentrant else ember.empty(0, requires_grad=True)
    if not _cls:
        _cls.append(_function_class())
    with forward_context:
        return _cls[0].apply(function, preserve_rng_state, recompute_context, dummy, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks; the last
    chunk runs normally (its activations are needed right away)."""
    import ember
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
    if isinstance(functions, ember.nn.Sequential):
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
