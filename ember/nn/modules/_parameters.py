"""Registering a layer's weight and bias as PyTorch's layers do, and the norm layers' reset of
their affine parameters to ones and zeros."""
from .. import init


def set_parameters(module, **parameters):
    """Register each of `parameters` on `module`, in order: a Parameter is set, None is
    registered as an absent parameter (PyTorch's `register_parameter(name, None)`, so the
    attribute reads None and state_dict skips it)."""
    for name, p in parameters.items():
        if p is None:
            module.register_parameter(name, None)
        else:
            setattr(module, name, p)


def reset_affine(module, affine):
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)
