"""The op registry and every op family. Importing this registers all ops and binds the
Tensor methods they export (torch's top-level forms of nn.functional's kernels, such as
torch.batch_norm and torch.lstm, register from nn/_functional when ember.nn loads)."""
import warnings

from .._tensor import Tensor
from . import registry  # noqa: F401
from . import (arithmetic, conversion, einsum, indexing, linalg, linalg_decomp,  # noqa: F401
               linalg_norms, linalg_spectral, matmul, pointwise, random, reduction, scatter,
               shape, sorting, take_put, views, indexing_views)
from . import filling, grids, index_ops, masked, random_factories, splitting  # noqa: F401
from . import activation, loss_ops, nn_ops, softmax_ops  # noqa: F401
from . import cumulative, minmax, statistics  # noqa: F401
from . import comparison, rounding, select, unary  # noqa: F401
from . import conv, pooling  # noqa: F401
from . import rnn_ops  # noqa: F401
from . import distance, nn_resample  # noqa: F401
from . import view_inplace  # noqa: F401
from . import complex, float_format, gamma_bessel, histograms, matrix_structure  # noqa: F401
from . import number_theory, strided, tensor_queries, view_scatters, windows  # noqa: F401
from . import fft, spectral  # noqa: F401
from . import linalg_householder, linalg_ldl, linalg_lu, linalg_removed, linalg_tensor  # noqa
from . import linalg_checks, linalg_primitives, linalg_solve  # noqa: F401
from . import copy_variants, fractional_pooling, index_reduce  # noqa: F401
from . import tensor_storage_methods  # noqa: F401
from . import tensor_unsupported_methods  # noqa: F401
from . import functional_entry_points, view_copies  # noqa: F401
from . import inplace_functions, legacy_norms, numeric_calculus, random_discrete  # noqa: F401
from . import lobpcg, lowrank, sync_batch_norm_kernels  # noqa: F401
from .registry import METHODS, OPS, PUBLIC  # noqa: F401


# NOTE: PyTorch computes 1/0, log(0) or an overflowing cast silently (inf, nan, wrapped
# values); NumPy would print a RuntimeWarning from inside ember for each. Only warnings raised
# by ember's own modules are silenced: a user's NumPy code keeps its warnings.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember\.")


def _bind_methods():
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)


_bind_methods()
