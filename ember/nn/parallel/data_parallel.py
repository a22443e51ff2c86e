"""DataParallel: one process, the batch split across CUDA devices (scatter, replicate,
parallel_apply, gather). Without CUDA, or with one device, the module runs directly."""
from itertools import chain

from ... import cuda
from ...autograd import grad_mode
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import _device, gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _cuda_ids(device_ids):
    if device_ids is None:
        return list(range(cuda.device_count()))
    return [d if isinstance(d, int) else _device(d).index or 0 for d in device_ids]


def _check_placement(module, src):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} "
                               f"(device_ids[0]) but found one of them on device: {t.device}")


class DataParallel(Module):
    """Split each batch along `dim` across `device_ids`, run a replica of `module` on each
    device in parallel and concatenate the outputs on `output_device`."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        if not cuda.is_available():
            self.device_ids = []
            return
        self.dim = dim
        self.device_ids = _cuda_ids(device_ids)
        self.output_device = self.device_ids[0] if output_device is None else \
            _cuda_ids([output_device])[0]
        self.src_device_obj = _device(self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_placement(self.module, self.src_device_obj)
        inputs, kwargs = scatter_kwargs(inputs, kwargs, self.device_ids, self.dim)
        if not inputs and not kwargs:
            inputs, kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **kwargs[0])
        replicas = replicate(self.module, self.device_ids[:len(inputs)],
                             not grad_mode.is_grad_enabled())
        outputs = parallel_apply(replicas, inputs, kwargs)
        return gather(outputs, self.output_device, self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """DataParallel's forward as a function."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        return module(*inputs, **(module_kwargs or {}))
    device_ids = _cuda_ids(device_ids)
    output_device = device_ids[0] if output_device is None else output_device
    return DataParallel(module, device_ids, output_device, dim)(*inputs,
                                                                 **(module_kwargs or {}))
