"""parameters_to_vector / vector_to_parameters."""
from ..._tensor import Tensor
from ...ops.shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    device = param.device
    if old_device is not None and device != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one vector (differentiable)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Point each parameter's data at its slice of `vec` (memory is shared, as PyTorch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
