"""The MPI side of ember.distributed: mpi4py import, datatypes, reduce ops, tensor buffers.

Nothing here knows about process groups; it maps ember tensors and reduce ops onto what
mpi4py's buffer-based calls (`Allreduce`, `Iallreduce`, ...) take, without copying.
"""
import numpy as np

from .._optional import require

_MPI = None


def MPI():
    """mpi4py.MPI, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        # NOTE: mpi4py calls MPI_Finalize at exit, which waits for the other ranks (a rank
        # that leaves without it makes hydra kill the rest). _failure skips it on a non-zero
        # exit, where waiting could hang the job.
        _MPI = require("mpi4py.MPI", "ember.distributed (backend 'mpi', 'gloo' or 'nccl')")
    return _MPI


def contiguous(array):
    """`array` itself when C-contiguous, else a contiguous copy (the caller writes it back)."""
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


# --------------------------------------------------------------------------- datatypes
_TYPES = None


def _types():
    global _TYPES
    if _TYPES is None:
        M = MPI()
        _TYPES = {
            np.dtype(np.float32): M.FLOAT, np.dtype(np.float64): M.DOUBLE,
            np.dtype(np.float16): M.FLOAT16_T if M.FLOAT16_T != M.DATATYPE_NULL else None,
            np.dtype(np.int8): M.INT8_T, np.dtype(np.uint8): M.UINT8_T,
            np.dtype(np.int16): M.INT16_T, np.dtype(np.int32): M.INT32_T,
            np.dtype(np.int64): M.INT64_T, np.dtype(np.bool_): M.C_BOOL,
            np.dtype(np.complex64): M.C_FLOAT_COMPLEX,
            np.dtype(np.complex128): M.C_DOUBLE_COMPLEX,
        }
    return _TYPES


def raw(array):
    """A byte-typed buffer spec for `array` (C-contiguous): for moves that never reduce."""
    return [array.reshape(-1).view(np.uint8), MPI().BYTE]


def typed(array):
    """A buffer spec that keeps the element type (reductions): bfloat16 and float16 (where the
    MPI library lacks it) travel as uint16 and reduce with our own operations."""
    t = _types().get(array.dtype)
    flat = array.reshape(-1)
    if t is None:
        return [flat.view(np.uint16), MPI().UINT16_T]
    return [flat, t]


# --------------------------------------------------------------------------- reduce ops
SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = range(9)
_BUILTIN = {SUM: "SUM", AVG: "SUM", PRODUCT: "PROD", MIN: "MIN", MAX: "MAX",
            BAND: "BAND", BOR: "BOR", BXOR: "BXOR"}
_BOOL = {SUM: "LOR", AVG: "LOR", MAX: "LOR", BOR: "LOR", PRODUCT: "LAND", MIN: "LAND",
         BAND: "LAND", BXOR: "LXOR"}
_NUMPY = {SUM: np.add, AVG: np.add, PRODUCT: np.multiply, MIN: np.minimum,
          MAX: np.maximum}
_user_ops = {}


def _half_op(np_dtype, code):
    """An MPI operation reducing 16-bit floats carried as uint16 (computed in float32)."""
    key = (np_dtype, code)
    op = _user_ops.get(key)
    if op is None:
        ufunc = _NUMPY[code]

        def reduce(inbuf, inoutbuf, datatype):
            a = np.frombuffer(inbuf, dtype=np_dtype)
            b = np.frombuffer(inoutbuf, dtype=np_dtype)
            b[...] = ufunc(a.astype(np.float32), b.astype(np.float32)).astype(np_dtype)

        op = _user_ops[key] = MPI().Op.Create(reduce, commute=True)
    return op


def mpi_op(code, array, fname="all_reduce", op_name=None):
    """The MPI operation for ReduceOp `code` on `array`'s dtype, with PyTorch's errors."""
    kind = array.dtype.kind
    if code == PREMUL_SUM:
        raise NotImplementedError("ReduceOp.PREMUL_SUM is only supported by NCCL")
    if kind == "c" and code in (MIN, MAX):
        raise ValueError(f"{fname} does not support {op_name} on complex tensors")
    if kind == "b":
        return getattr(MPI(), _BOOL[code])
    if code in (BAND, BOR, BXOR) and kind not in "iu":
        raise RuntimeError(f"Cannot use ReduceOp.{op_name.name} with non-integral dtype")
    if _types().get(array.dtype) is None:
        return _half_op(array.dtype, code)
    return getattr(MPI(), _BUILTIN[code])


def finish_avg(array, n):
    """AVG = SUM / group size, in place (integer tensors divide with floor, as NCCL does)."""
    if array.dtype.kind in "iu":
        np.floor_divide(array, n, out=array)
    elif array.dtype.kind != "b":
        array /= n
