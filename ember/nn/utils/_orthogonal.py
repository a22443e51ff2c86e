"""nn.utils.parametrizations.orthogonal: a matrix (or batch of matrices) kept orthogonal
through the matrix exponential, the Cayley map or a product of Householder reflectors, with
PyTorch's dynamic trivialization (a `base` buffer the map is applied to)."""
from ..._creation import eye, ones_like, zeros_like
from ..._dtype import finfo
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.comparison import allclose
from ...ops.linalg_decomp import qr
from ...ops.linalg_norms import vector_norm
from ...ops.linalg_solve import solve
from ...ops.linalg_spectral import matrix_exp
from ...ops.pointwise import copysign, hypot
from ...ops.random_factories import randn
from ...ops.select import where
from ...ops.shape import cat, stack
from ..modules.module import Module
from . import parametrize

_MAPS = ("matrix_exp", "cayley", "householder")


def _householder_product(A, tau):
    """The first k columns of H_0 H_1 ... H_{k-1}, with H_i = I - tau_i v_i v_i^H and v_i the
    strictly-lower part of column i of A with a unit diagonal (torch.linalg.householder_product).
    Composed from ember ops, so it is differentiable; the loop is over reflectors."""
    n, k = A.shape[-2], A.shape[-1]
    V = A.tril(-1) + eye(n, k, dtype=A.dtype)
    Q = eye(n, k, dtype=A.dtype).expand(*A.shape[:-2], n, k)
    for i in reversed(range(tau.shape[-1])):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i, None, None] * (v @ (v.mH @ Q))
    return Q


def _geqrf(A):
    """LAPACK's geqrf for real A (..., n, k), n >= k: R on and above the diagonal, the
    Householder vectors below it, and the scalars tau (its dlarfg conventions)."""
    A = A.clone()
    k = A.shape[-1]
    taus = []
    for j in range(k):
        x = A[..., j:, j]
        alpha = x[..., 0]
        xnorm = vector_norm(x[..., 1:], dim=-1)
        reflect = xnorm != 0
        beta = where(reflect, -copysign(hypot(alpha, xnorm), alpha), alpha)
        safe_beta = where(reflect, beta, ones_like(beta))
        tau = where(reflect, (beta - alpha) / safe_beta, zeros_like(beta))
        scale = where(reflect, alpha - beta, ones_like(beta))
        v = cat([ones_like(alpha)[..., None], x[..., 1:] / scale[..., None]], -1)
        rest = A[..., j:, j + 1:]
        A[..., j:, j + 1:] = rest - tau[..., None, None] * (v[..., :, None] @ (
            v[..., None, :] @ rest))
        A[..., j, j] = beta
        A[..., j + 1:, j] = v[..., 1:]
        taus.append(tau)
    return A, stack(taus, -1)


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with diag(R) made non-negative."""
    Q, R = qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    identity = eye(k, dtype=Q.dtype)
    return allclose(Q.mH @ Q, identity, atol=10.0 * n * finfo(Q.dtype).eps)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            # A skew-symmetric n x n matrix from the lower triangle (zero-padded when tall).
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], -1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)
            else:
                identity = eye(n, dtype=A.dtype)
                Q = solve(identity - 0.5 * A, identity + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # NOTE: the diagonal's integer part carries the sign of each column, as PyTorch.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in ("matrix_exp", "cayley"):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # Householder vectors below the diagonal, the reflections' signs on it.
            A, tau = _geqrf(Q)
            diagonal = A.diagonal(dim1=-2, dim2=-1)
            sign = diagonal.sign()
            diagonal.copy_(where(tau == 0.0, -sign, sign))
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            # Complete the columns to a square orthogonal base with random ones.
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], -1))
        self.base = Q
        neg_eye = zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep `module.<name>` orthogonal (orthonormal columns if tall, rows if wide)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
