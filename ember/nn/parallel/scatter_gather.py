"""scatter / gather for DataParallel: split inputs across devices, join outputs on one.

Both are differentiable (chunk, `.to(device)` and cat are ember ops), so gradients flow
back from the gathered output to the original inputs."""
import warnings

from ..._device import device
from ..._tensor import Tensor
from ...ops.shape import cat

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device(d):
    return device("cuda", d) if isinstance(d, int) else device(d)


def scatter(inputs, target_gpus, dim=0):
    """Split the tensors in `inputs` into len(target_gpus) chunks along `dim`, one per device;
    tuples, lists and dicts are split element-wise, other objects referenced on each."""
    devices = [_device(d) for d in target_gpus]

    def split(obj):
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(devices), dim)
            return [c.to(d) for c, d in zip(chunks, devices)]
        if isinstance(obj, tuple) and obj:
            return [type(obj)(x) if not hasattr(obj, "_fields") else type(obj)(*x)
                    for x in zip(*map(split, obj))]
        if isinstance(obj, list) and obj:
            return [list(x) for x in zip(*map(split, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(zip(obj.keys(), x)) for x in zip(*map(split, obj.values()))]
        return [obj for _ in devices]
    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter for a call's positional and keyword arguments, padded to the same length."""
    inputs = scatter(inputs, target_gpus, dim) if inputs else []
    kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(inputs) < len(kwargs):
        inputs.extend(() for _ in range(len(kwargs) - len(inputs)))
    elif len(kwargs) < len(inputs):
        kwargs.extend({} for _ in range(len(inputs) - len(kwargs)))
    return tuple(inputs), tuple(kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenate the per-device `outputs` along `dim` on `target_device` (recursively
    through tuples, lists and dicts)."""
    device = _device(target_device) if target_device != -1 else _device("cpu")

    def join(outs):
        first = outs[0]
        if isinstance(first, Tensor):
            if all(o.dim() == 0 for o in outs) and dim == 0:
                warnings.warn("Was asked to gather along dimension 0, but all input tensors "
                              "were scalars; will instead unsqueeze and return a vector.")
                outs = [o.view(1) for o in outs]
            return cat([o.to(device) for o in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            return type(first)((k, join([o[k] for o in outs])) for k in first)
        if isinstance(first, (list, tuple)):
            joined = [join(list(x)) for x in zip(*outs)]
            return type(first)(*joined) if hasattr(first, "_fields") else type(first)(joined)
        return first
    return join(list(outputs))
