"""How tensors cross process boundaries: through shared memory, never as pickled bytes.

Registered with multiprocessing's ForkingPickler, so Queues, Pipes and Process arguments
(spawn) carry only the segment name; the receiver maps the same memory (Hogwild works).
"""
from multiprocessing.reduction import ForkingPickler

from .. import _dtype as dt
from .._tensor import Tensor, _as_subclass, _wrap
from ..nn.parameter import Parameter
from . import shared_memory as shm


def share_memory_(tensor):
    """Move the tensor's data into a shared segment (no-op if already shared)."""
    if getattr(tensor, "_shm_name", None) is not None:
        return tensor
    if tensor._device.type != "cpu":
        return tensor  # CUDA tensors are shared by IPC handles in PyTorch; not here
    array, name = shm.create_array(tensor._data.shape, tensor._data.dtype)
    array[...] = tensor._data
    shm.own(name)
    tensor._data = array
    tensor._shm_name = name
    return tensor


def is_shared(tensor):
    return getattr(tensor, "_shm_name", None) is not None


def rebuild_tensor(cls, name, shape, dtype_name, requires_grad):
    array = shm.open_array(name, shape, dt._BY_NAME[dtype_name].np)
    t = _wrap(array, dt._BY_NAME[dtype_name])
    if cls is not Tensor:
        t = _as_subclass(t, cls)
    t._shm_name = name
    t._requires_grad = requires_grad
    return t


def reduce_tensor(tensor):
    if tensor._requires_grad and tensor.grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    share_memory_(tensor)
    return (rebuild_tensor, (type(tensor), tensor._shm_name, tensor._data.shape,
                             tensor.dtype.name, tensor._requires_grad))


def init_reductions():
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
