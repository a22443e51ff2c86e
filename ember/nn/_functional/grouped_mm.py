"""grouped_mm (one matrix product per group of rows, columns or contraction slices, as
mixture-of-experts layers use) and the float8 scaled products scaled_mm /
scaled_grouped_mm, which need float8 tensors ember does not have."""
import enum

from ... import _dtype as dt
from ..._creation import zeros
from ..._signatures import Parser
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
    _GROUPED_MM.check((mat_a, mat_b), {"offs": offs, "bias": bias, "out_dtype": out_dtype})
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


_GROUPED_MM = Parser("_grouped_mm", ("Tensor input, Tensor mat2, Tensor? offs = None, "
                                     "Tensor? bias = None, torch.dtype? out_dtype = None",))
_SCALES = ("Tensor input, Tensor mat2, tuple of Tensors scale_a, tuple of ints recipe_a, "
           "tuple of ints swizzle_a, tuple of Tensors scale_b, tuple of ints recipe_b, "
           "tuple of ints swizzle_b, ")
_SCALED_MM = Parser("_scaled_mm_v2", (_SCALES + "Tensor? bias, torch.dtype? out_dtype, tuple "
                                      "of ints contraction_dim = (), bool use_fast_accum = "
                                      "False",))
_SCALED_GROUPED_MM = Parser("_scaled_grouped_mm_v2", (
    _SCALES + "Tensor? offs = None, Tensor? bias = None, torch.dtype? out_dtype = None, tuple "
    "of ints contraction_dim = (), bool use_fast_accum = False",))


def _as_list(v):
    """torch's wrappers: None as [], a single value as [v]."""
    return [] if v is None else v if isinstance(v, list) else [v]


def _builtin_args(scale_a, recipe_a, scale_b, recipe_b, swizzle_a, swizzle_b):
    """The scaled products' arguments as torch's Python wrappers hand them to the builtins:
    lists, the enums as their values (so anything else fails reading .value)."""
    def values(enums):
        return [e.value for e in _as_list(enums)]
    return (_as_list(scale_a), values(recipe_a), values(swizzle_a), _as_list(scale_b),
            values(recipe_b), values(swizzle_b))


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=dt.bfloat16, contraction_dim=(),
              use_fast_accum=False):
    sa, ra, wa, sb, rb, wb = _builtin_args(scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                                           swizzle_a, swizzle_b)
    _SCALED_MM.check((mat_a, mat_b, sa, ra, wa, sb, rb, wb, bias, output_dtype,
                      contraction_dim, use_fast_accum), {})
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dim() != 2:
            raise ValueError(f"{name} must be a matrix")
    (m, k), (k2, n) = mat_a.shape, mat_b.shape
    if not mat_a.numel() or not mat_b.numel():   # nothing to scale: zeros (or nothing)
        return zeros((m, n), dtype=output_dtype or mat_a.dtype, device=mat_a.device)
    if k != k2:
        raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    if bias is not None and bias.numel() != n:
        raise ValueError(f"Bias must be size {n} but got {bias.numel()}")
    if len(contraction_dim) not in (0, 2):
        raise ValueError("contraction_dim must have exactly 2 elements")
    # NOTE: every configuration wants float8 operands, which ember does not have
    raise ValueError("Invalid scaling configuration.\n"
                     "- For TensorWise scaling, a and b should be float8, scales should be float "
                     "and singletons.\n"
                     "- For RowWise scaling, a and b should be float8, scales should be float, "
                     f"scale_a should be ({m}, 1) and scale_b should be (1, {n}), and both should "
                     "be contiguous.\n"
                     "Got " + _described(mat_a, sa, mat_b, sb))


def _described(mat_a, scale_a, mat_b, scale_b):
    parts = []
    for name, mat, scales in (("a", mat_a, scale_a), ("b", mat_b, scale_b)):
        parts.append(f"mat_{name}.dtype()={dt.type_name(mat.dtype)}")
        if not scales:
            parts.append(f"scale_{name}=None")
            continue
        s = scales[0]
        parts += [f"scale_{name}.dtype()={dt.type_name(s.dtype)}",
                  f"scale_{name}.size()={list(s.shape)}",
                  f"scale_{name}.stride()={list(s.stride())}"]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=dt.bfloat16, contraction_dim=(), use_fast_accum=False):
    sa, ra, wa, sb, rb, wb = _builtin_args(scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                                           swizzle_a, swizzle_b)
    _SCALED_GROUPED_MM.check((mat_a, mat_b, sa, ra, wa, sb, rb, wb, offs, bias, output_dtype,
                              contraction_dim, use_fast_accum), {})
    raise NotImplementedError("Could not run 'aten::_scaled_grouped_mm_v2' with arguments "
                              "from the 'CPU' backend: ember does not support float8 tensors")
