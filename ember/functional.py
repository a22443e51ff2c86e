"""ember.functional (torch.functional): the functions PyTorch defines in torch/functional.py,
the same objects as ember.<name> (torch.functional.norm is torch.norm)."""
import ember as _ember
from ember import (atleast_1d, atleast_2d, atleast_3d, block_diag,  # noqa: F401
                   broadcast_shapes, broadcast_tensors, cartesian_prod, cdist, chain_matmul,
                   einsum, istft, meshgrid, norm, split, stft, tensordot, unique,
                   unique_consecutive, unravel_index)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag",  # noqa: F822
           "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft",
           "lu", "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank",
           "tensordot", "unique", "unique_consecutive", "unravel_index"]


def __getattr__(name):
    # lu, pca_lowrank, svd_lowrank: ember's own message says they are not there yet
    if name in __all__:
        return getattr(_ember, name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
