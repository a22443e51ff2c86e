"""The entry points a capture records as call steps or breaks the graph at, and how it
patches them while it runs (capture.py's Recorder.install; uninstall puts them back)."""
import builtins
import sys

from .._tensor import Tensor
from ..nn._functional import dropout, normalization
from ..nn.modules.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer

# Ops whose result shape depends on the values of their inputs (a graph break in PyTorch).
DATA_DEPENDENT = ("nonzero", "argwhere", "masked_select", "unique", "unique_consecutive",
                  "bincount")
# Tensor factories of the public namespace, recorded as calls.
FACTORIES = ("tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
             "empty_strided", "eye", "arange", "range", "linspace", "logspace",
             "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn", "randint",
             "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli",
             "multinomial", "poisson", "scalar_tensor", "tril_indices", "triu_indices")
# Tensor methods recorded as calls besides the in-place ones (names ending in "_").
TENSOR_CALLS = ("detach", "backward", "retain_grad", "register_hook", "new_tensor",
                "new_zeros", "new_ones", "new_full", "new_empty", "new_empty_strided",
                "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__",
                "__ilshift__", "__irshift__", "__imatmul__")
TENSOR_PROPERTIES = ("data", "grad", "requires_grad")


def patch_calls(recorder):
    """The factories, in-place and state-changing methods, optimizer and scheduler steps,
    BatchNorm's statistics and hooked module calls, each recorded as one call step."""
    import ember   # (cycle: ember/__init__ imports this package)
    from ..nn.modules import hooks   # (deferred: `import ember` skips nn.modules.hooks)
    own_modules = [m for n, m in list(sys.modules.items())
                   if n.startswith("ember.") and m is not None]
    for name in FACTORIES:
        fn = ember.__dict__.get(name)
        if fn is None:
            continue
        recorded = recorder.recorded(fn)
        recorder.patch(ember, name, recorded)
        inner = getattr(fn, "__wrapped__", fn)   # (behind the argument checks)
        recorder.lowerable_calls.update((fn, inner))
        # ember's own calls: every module that bound the factory by name (its home and the
        # modules that import it from there)
        recorded_inner = recorder.recorded(inner)
        for module in own_modules:
            if module.__dict__.get(name) is inner:
                recorder.patch(module, name, recorded_inner)
    for name, fn in list(Tensor.__dict__.items()):
        if callable(fn) and (name in TENSOR_CALLS or
                             (name.endswith("_") and not name.startswith("_"))):
            recorder.patch(Tensor, name, recorder.recorded(fn))
    for name in TENSOR_PROPERTIES:
        recorder.patch(Tensor, name, _recorded_property(recorder, Tensor.__dict__[name], name))
    recorder.patch(normalization, "_update_stats",
                recorder.recorded(normalization._update_stats))
    recorder.lowerable_calls.add(normalization._update_stats)
    # dropout's mask draws in one pass without the Tensor methods (ops/random.dropout_mask_)
    recorder.patch(dropout, "dropout_mask_", recorder.recorded(dropout.dropout_mask_))
    # A module call with hooks is one recorded call: the hooks run again on replay.
    recorder.patch(hooks, "call_with_hooks", recorder.recorded(hooks.call_with_hooks))
    for base, names in ((Optimizer, ("step", "zero_grad")), (LRScheduler, ("step",)),
                        (Module, ("zero_grad",))):
        for cls in _subclasses(base):
            for name in names:
                if name in cls.__dict__:
                    recorder.lowerable_calls.add(cls.__dict__[name])
                    recorder.patch(cls, name, recorder.recorded(cls.__dict__[name]))

def _recorded_property(recorder, prop, name):
    getter = recorder.recorded(prop.fget) if name == "data" else prop.fget

    def setter(target, value):
        recorder.setattr(prop, name, target, value)
    return property(getter, setter, prop.fdel, prop.__doc__)

def patch_breaks(recorder):
    """Data-dependent shapes, a tensor's value read in Python and print: graph breaks."""
    import ember   # (cycle: ember/__init__ imports this package)

    def breaking(fn, name):
        def run(*args, **kwargs):
            if not recorder.passing():
                recorder.graph_break(f"dynamic shape operator: {name}")
            return fn(*args, **kwargs)
        return run
    for name in DATA_DEPENDENT:
        for owner in (ember, Tensor):
            if name in owner.__dict__:
                recorder.patch(owner, name, breaking(owner.__dict__[name], name))
    host = Tensor.__dict__["_host"]

    def _host(t):
        if not recorder.passing():
            recorder.graph_break("a tensor's value was read in Python (item, tolist, bool, "
                             "numpy or printing)")
        return host(t)
    recorder.patch(Tensor, "_host", _host)
    original_print = builtins.print

    def print_(*args, **kwargs):
        if not recorder.passing():
            recorder.graph_break("print")
        return original_print(*args, **kwargs)
    recorder.patch(builtins, "print", print_)


def _subclasses(cls):
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out
