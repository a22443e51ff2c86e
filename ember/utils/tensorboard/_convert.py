"""What the writer accepts (ember tensors, NumPy arrays, Python and NumPy numbers, lists),
as the NumPy arrays tensorboardX works on."""
import numpy as np

from ..._tensor import Tensor


def make_np(x):
    """A NumPy array holding `x`'s values (a number becomes a 1-element array, as in PyTorch)."""
    if isinstance(x, Tensor):
        x = x.detach()
        if x.dtype.np.kind == "V":  # bfloat16 (ml_dtypes)
            x = x.float()  # NOTE: numpy() refuses bfloat16, as PyTorch's does
        return x.cpu().numpy()
    if isinstance(x, np.ndarray):
        return _plain(x)
    if np.isscalar(x) and not isinstance(x, (str, bytes)):
        return np.array([x])
    if isinstance(x, (list, tuple)):
        if any(isinstance(e, Tensor) for e in x):
            return np.stack([make_np(e) if isinstance(e, Tensor) else np.asarray(e)
                             for e in x])
        return _plain(np.asarray(x))
    raise NotImplementedError(
        f"Got {type(x)}, but numpy array or torch tensor are expected.")


def _plain(a):
    # NOTE: ml_dtypes' bfloat16 arrays are not NumPy floats to np.histogram and friends.
    if a.dtype.kind == "V" or (a.dtype.kind == "f" and a.dtype.itemsize == 2
                               and a.dtype != np.float16):
        return a.astype(np.float32)
    return a


def to_float(x):
    """One number from a number, a one-element tensor or array."""
    a = make_np(x)
    if a.size != 1:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {a.size} and {a.squeeze().ndim} dimensions.")
    return float(a.reshape(()))
