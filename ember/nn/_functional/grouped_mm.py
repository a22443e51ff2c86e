"""grouped_mm (one matrix product per group of rows, columns or contraction slices, as
mixture-of-experts layers use) and the float8 scaled products scaled_mm /
scaled_grouped_mm, which need float8 tensors ember does not have."""
import enum

from ... import _dtype as dt
from ...ops.registry import PUBLIC, check_tensor

__all__ = ["grouped_mm", "scaled_mm", "scaled_grouped_mm", "ScalingType", "SwizzleType"]


class ScalingType(enum.IntEnum):
    """How scaled_mm's scales apply (PyTorch's _ScalingType)."""
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    """The layout of scaled_mm's block scales (PyTorch's _SwizzleType)."""
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


def _check_alignment(*mats):
    # NOTE: PyTorch's grouped GEMM reads rows through 16-byte-aligned strides; it refuses
    # other layouts on every device, so ember does too (a program that runs here then runs
    # on PyTorch).
    for m in mats:
        item = m.element_size()
        if any(s != 1 and (s * item) % 16 for s in m.stride()):
            raise RuntimeError("strides should be multiple of 16 bytes")


def _bounds(offs, total):
    ends = [int(v) for v in offs.tolist()]
    starts = [0] + ends[:-1]
    return [(lo, min(hi, total)) for lo, hi in zip(starts, ends)]


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Products of matching groups: 3-D x 3-D (a batch, no offs); 2-D x 3-D (rows of
    mat_a split at offs, group g times mat_b[g]); 3-D x 2-D (columns of mat_b split);
    2-D x 2-D (the contraction dim split: one product per group, stacked)."""
    check_tensor("grouped_mm", mat_a, "mat_a")
    check_tensor("grouped_mm", mat_b, "mat_b", 2)
    _check_alignment(mat_a, mat_b)
    a3, b3 = mat_a.dim() == 3, mat_b.dim() == 3
    if (offs is None) != (a3 and b3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if a3 and b3:
        return mat_a.bmm(mat_b)
    cat = PUBLIC["cat"]
    if not a3 and b3:      # rows of mat_a, one group per matrix of mat_b
        rows = mat_a.shape[0]
        pieces = [mat_a[lo:hi].mm(mat_b[g]) for g, (lo, hi) in
                  enumerate(_bounds(offs, rows))]
        used = sum(p.shape[0] for p in pieces)
        # rows past the last offset belong to no group: PyTorch leaves them unset (zeros here)
        rest = [mat_a.new_zeros((rows - used, mat_b.shape[-1]))] if used < rows else []
        return cat(pieces + rest, 0)
    if a3 and not b3:      # columns of mat_b, one group per matrix of mat_a
        cols = mat_b.shape[1]
        pieces = [mat_a[g].mm(mat_b[:, lo:hi]) for g, (lo, hi) in
                  enumerate(_bounds(offs, cols))]
        used = sum(p.shape[1] for p in pieces)
        rest = [mat_a.new_zeros((mat_a.shape[1], cols - used))] if used < cols else []
        return cat(pieces + rest, 1)
    # both 2-D: the contraction dim split at offs, one (M, N) product per group
    return PUBLIC["stack"]([mat_a[:, lo:hi].mm(mat_b[lo:hi]) for lo, hi in
                            _bounds(offs, mat_a.shape[1])], 0)


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=dt.bfloat16, contraction_dim=(),
              use_fast_accum=False):
    # NOTE: PyTorch raises ValueError for non-float8 operands, the only ones ember has
    check_tensor("scaled_mm", mat_a, "mat_a")
    check_tensor("scaled_mm", mat_b, "mat_b", 2)
    raise ValueError(f"Invalid scaling configuration: ember does not support float8 tensors "
                     f"(got mat_a.dtype()={dt.type_name(mat_a.dtype)}, "
                     f"mat_b.dtype()={dt.type_name(mat_b.dtype)})")


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=dt.bfloat16, contraction_dim=(), use_fast_accum=False):
    raise NotImplementedError("Could not run 'aten::_scaled_grouped_mm_v2' with arguments "
                              "from the 'CPU' backend: ember does not support float8 tensors")
