"""replicate: copies of a module on several devices whose parameters are differentiable
copies of the original's, so gradients of every replica land in the original's `.grad`."""
from ..modules.module import Module
from .scatter_gather import _device

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """One replica of `network` per device (`devices`: CUDA indices or devices)."""
    devices = [_device(d) for d in devices]
    modules = list(network.modules())
    replicas = []
    for dev in devices:
        copies = {}
        for m in modules:
            r = Module.__new__(type(m))
            r.__dict__ = m.__dict__.copy()
            r.__dict__["_parameters"] = {
                k: None if p is None else (p.detach() if detach else p).to(dev)
                for k, p in m._parameters.items()}
            r.__dict__["_buffers"] = {k: None if b is None else b.to(dev)
                                      for k, b in m._buffers.items()}
            copies[id(m)] = r
        for m in modules:
            copies[id(m)].__dict__["_modules"] = {
                k: None if c is None else copies[id(c)] for k, c in m._modules.items()}
        replicas.append(copies[id(network)])
    return replicas
