"""NCCL for CUDA tensors (backend='nccl'), through CuPy's bindings.

A group's NCCL communicator is made on its first CUDA collective: rank 0 draws the unique
id and MPI broadcasts it. Calls are queued on CuPy's current stream; a Work's wait()
synchronises that stream. NOTE: checked only where a GPU is present (not on CI).
"""
import os

from .. import cuda
from .._inplace import bump_version
from .distributed_c10d import Work

_TYPES = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "float16": "NCCL_FLOAT16",
          "bfloat16": "NCCL_BFLOAT16", "int8": "NCCL_INT8", "uint8": "NCCL_UINT8",
          "int32": "NCCL_INT32", "int64": "NCCL_INT64", "bool": "NCCL_UINT8"}
_OPS = {0: "NCCL_SUM", 1: "NCCL_AVG", 2: "NCCL_PROD", 3: "NCCL_MIN", 4: "NCCL_MAX"}


def prepare(pg, device_id=None):
    """Remember which device this rank uses (device_id, else LOCAL_RANK's, else current)."""
    if device_id is not None:
        pg._nccl_device = getattr(device_id, "index", device_id)
    elif os.environ.get("LOCAL_RANK"):
        pg._nccl_device = int(os.environ["LOCAL_RANK"]) % max(cuda.device_count(), 1)


def _comm(pg):
    if pg._nccl is None:
        from cupy.cuda import nccl   # (optional: cupy)
        uid = nccl.get_unique_id() if pg.rank() == 0 else None
        uid = pg.comm.bcast(uid, 0)
        pg._nccl = nccl.NcclCommunicator(pg.size(), uid, pg.rank())
    return pg._nccl


def _args(t, code=None):
    import cupy   # (optional: cupy)
    from cupy.cuda import nccl   # (optional: cupy)
    name = t.dtype.name
    dtype = getattr(nccl, _TYPES[name], None) if name in _TYPES else None
    if dtype is None:
        raise RuntimeError(f"NCCL does not support dtype {t.dtype}")
    a = t._data if t._data.flags.c_contiguous else cupy.ascontiguousarray(t._data)
    op = None if code is None else getattr(nccl, _OPS.get(code, ""), None)
    if code is not None and op is None:
        raise RuntimeError(f"NCCL does not support this reduce op ({code})")
    return a, dtype, op, cupy.cuda.get_current_stream()


def _work(pairs, stream, async_op):
    """Copy staged results back (non-contiguous tensors), then sync on wait()."""
    def finish():
        stream.synchronize()
        for t, a in pairs:
            if a is not t._data:
                t._data[...] = a
            bump_version(t)
    if async_op:
        return Work(finish=finish, result=[t for t, _ in pairs])
    finish()
    return None


def all_reduce(pg, t, code, async_op):
    a, dtype, op, s = _args(t, code)
    _comm(pg).allReduce(a.data.ptr, a.data.ptr, a.size, dtype, op, s.ptr)
    return _work([(t, a)], s, async_op)


def reduce(pg, t, root, code, async_op):
    a, dtype, op, s = _args(t, code)
    _comm(pg).reduce(a.data.ptr, a.data.ptr, a.size, dtype, op, root, s.ptr)
    return _work([(t, a)], s, async_op)


def broadcast(pg, t, root, async_op):
    a, dtype, _, s = _args(t)
    _comm(pg).bcast(a.data.ptr, a.size, dtype, root, s.ptr)
    return _work([(t, a)], s, async_op)


def all_gather_into_tensor(pg, out, inp, async_op):
    src, dtype, _, s = _args(inp)
    a, _, _, _ = _args(out)
    _comm(pg).allGather(src.data.ptr, a.data.ptr, src.size, dtype, s.ptr)
    return _work([(out, a)], s, async_op)


def reduce_scatter_tensor(pg, out, inp, code, async_op):
    src, dtype, op, s = _args(inp, code)
    a, _, _, _ = _args(out)
    _comm(pg).reduceScatter(src.data.ptr, a.data.ptr, a.size, dtype, op, s.ptr)
    return _work([(out, a)], s, async_op)
