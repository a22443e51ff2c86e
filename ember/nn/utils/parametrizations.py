"""nn.utils.parametrizations: weight_norm, spectral_norm, orthogonal (through parametrize)."""
from ... import _tensor   # (the module: a bare Tensor would join this module's public names)
from ...autograd.grad_mode import no_grad
from ...ops.linalg import vdot
from ...ops.linalg_norms import vector_norm
from ...ops.matmul import mv
from .._functional.normalization import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from ._orthogonal import orthogonal  # noqa: F401

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm over every dim but `dim` (kept as size-1 dims); dim -1: the whole tensor."""
    if dim == -1:
        return v.norm()
    dims = tuple(d for d in range(v.dim()) if d != dim)
    return vector_norm(v, 2, dim=dims, keepdim=True) if dims else v.abs()


def _weight_norm(v, g, dim):
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """w = g * v / ||v||, stored as parametrizations.<name>.original0 (g) and original1 (v)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
        # Checkpoints of the legacy hook-based weight_norm use <name>_g / <name>_v.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(compat_hook)
    return module


class _SpectralNorm(Module):
    """W / sigma(W), sigma estimated by power iteration on buffers _u and _v (updated in
    training mode); the initial u, v are normal draws made exactly as PyTorch's."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.dim() <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got "
                                 f"{weight.dim()}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = normalize(mv(weight_mat, self._v), dim=0, eps=self.eps,
                                    out=self._u)
                self._v = normalize(mv(weight_mat.mH, self._u), dim=0, eps=self.eps,
                                    out=self._v)

    def forward(self, weight):
        if weight.dim() == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    weight = getattr(module, name, None)
    if not isinstance(weight, _tensor.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
