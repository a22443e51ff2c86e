"""functional_call and stack_module_state: a Module as a function of its parameters.

functional_call swaps the given tensors into the module's parameter and buffer dicts for one
call and restores the originals after (even when the call raises), so grad, vmap and the
other transforms can take a model's parameters as plain inputs.
"""
from .._tensor import Tensor
from ..nn.modules.batchnorm import _BatchNorm
from ..ops.shape import stack


def _owner(module, name):
    """The submodule holding `name` ('layer.0.weight') and the attribute's own name."""
    *path, leaf = name.split(".")
    for part in path:
        module = module._modules[part]
    return module, leaf


def _merge(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    merged = {}
    for d in parameter_and_buffer_dicts:
        for key, value in d.items():
            if key in merged:
                raise ValueError(f"['{key}'] appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            merged[key] = value
    return merged


def _state_names(module):
    """{name: tensor} for every parameter and buffer, tied ones under each of their names."""
    names = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        dot = prefix + "." if prefix else ""
        for key, value in sub._parameters.items():
            if value is not None:
                names[dot + key] = value
        for key, value in sub._buffers.items():
            if value is not None:
                names[dot + key] = value
    return names


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the dicts' tensors."""
    replacements = _merge(parameter_and_buffer_dicts)
    current = _state_names(module)
    if tie_weights:
        # A tied tensor replaced under one of its names is replaced under all of them.
        by_identity = {}
        for name, tensor in current.items():
            by_identity.setdefault(id(tensor), []).append(name)
        for name in list(replacements):
            if name in current:
                for twin in by_identity[id(current[name])]:
                    replacements.setdefault(twin, replacements[name])
    if strict:
        unexpected = sorted(k for k in replacements if k not in current)
        missing = sorted(k for k in current if k not in replacements)
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                             + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("\n".join(lines))
    saved = []
    try:
        for name, value in replacements.items():
            owner, leaf = _owner(module, name)
            for store in (owner._parameters, owner._buffers):
                if leaf in store:
                    saved.append((store, leaf, store[leaf]))
                    store[leaf] = value
                    break
            else:
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _ABSENT)))
                owner.__dict__[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, value in reversed(saved):
            if value is _ABSENT:
                del store[leaf]
            else:
                store[leaf] = value


_ABSENT = object()


def stack_module_state(models):
    """(params, buffers): each name's tensors of `models` stacked along a new dim 0, params as
    fresh leaves that require grad when the originals do (model ensembling with vmap)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        out = {}
        for name in named[0]:
            tensors = [n[name] for n in named]
            t = stack([x.detach() for x in tensors])
            if all(isinstance(x, Tensor) and x.requires_grad for x in tensors):
                t.requires_grad_()
            out[name] = t
        return out
    params = stacked([dict(m.named_parameters()) for m in models])
    buffers = stacked([dict(m.named_buffers()) for m in models])
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Batch norm modules of `root` stop tracking running statistics (in place), so that
    vmap over a batch never needs to update shared buffers; returns `root`."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
