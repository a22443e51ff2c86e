"""The affine weight and bias of the normalisation layers (batch, instance, layer and group
norm): registered in PyTorch's order, None where the layer is not affine (the bias alone with
bias=False), and reset to ones and zeros."""
from .. import init


def register_affine(module, affine, bias, new_parameter):
    """Give `module` its weight and bias, each made by `new_parameter()` (a Parameter, or an
    UninitializedParameter for the lazy layers)."""
    if affine:
        module.weight = new_parameter()
        if bias:
            module.bias = new_parameter()
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def reset_affine(module, affine):
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)
