"""Collectives on ember tensors, in place as PyTorch's: MPI calls on the tensors' own buffers.

A C-contiguous CPU tensor travels with no copy (MPI.IN_PLACE where the result lands in the
input); a non-contiguous one goes through a contiguous copy written back after; a CUDA tensor
goes over NCCL when its group has a NCCL communicator, else through host memory.

Shapes and dtypes are checked across ranks before each collective (one Allgather of a
checksum, a few microseconds) so a mismatch raises a clear error on every rank instead of
hanging or corrupting memory; EMBER_DISTRIBUTED_CHECKS=0 turns the check off.
"""
import os
import zlib

import numpy as np

from .. import backends
from .._inplace import bump_version
from .._tensor import Tensor
from . import _mpi
from .distributed_c10d import ReduceOp, Work, _group_peer, _op_code, _resolve

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all",
           "all_to_all_single", "barrier", "monitored_barrier"]

CHECKS = os.environ.get("EMBER_DISTRIBUTED_CHECKS", "1") != "0"


# --------------------------------------------------------------------------- buffers
def _buffer(t):
    """(contiguous host array holding t's values, writeback or None): no copy when possible."""
    a = t._data
    if type(a) is np.ndarray:
        if a.flags.c_contiguous:
            return a, None
        c = np.ascontiguousarray(a)

        def writeback():
            a[...] = c
        return c, writeback
    h = np.ascontiguousarray(backends.to_host(t._device, a))

    def writeback():
        a[...] = backends.to_device(t._device, h)
    return h, writeback


def _commit(t, writeback):
    if writeback is not None:
        writeback()
    bump_version(t)


def _run(pg, async_op, blocking, nonblocking, finish=None, result=None):
    """Run a collective both ways: blocking() now, or nonblocking() -> requests in a Work."""
    if async_op:
        return Work(nonblocking(), finish, result)
    blocking()
    if finish is not None:
        finish()
    return None


def _use_nccl(pg, tensors):
    """NCCL for CUDA tensors of an 'nccl' group when the CUDA backend has NCCL (CuPy's);
    otherwise (CPU tensors, or the test suite's NumPy stand-in for CUDA) MPI carries them."""
    if pg._backend != "nccl" or not any(t._device.type == "cuda" for t in tensors):
        return False
    return backends.get("cuda").nccl


# --------------------------------------------------------------------------- checks
def _describe(tensors):
    return "; ".join(f"{t.dtype.name} {list(t._data.shape)}"
                     for t in tensors)


def _verify(pg, fname, tensors):
    """Every rank must pass tensors of the same dtypes and shapes (one Allgather of a CRC)."""
    if not CHECKS or pg.size() == 1:
        return
    desc = _describe(tensors)
    mine = np.array([zlib.crc32(desc.encode())], np.int64)
    every = np.empty(pg.size(), np.int64)
    pg.comm.Allgather(mine, every)
    if (every != every[0]).any():
        descs = pg.comm.allgather(desc)
        lines = ", ".join(f"rank {r} has {d}" for r, d in enumerate(descs))
        raise RuntimeError(f"ember.distributed.{fname}: the tensors differ across ranks (every "
                           f"rank must pass the same shapes and dtypes): {lines}")


def _check_tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _check_list(lst, n, like, fname, what="output"):
    if len(lst) != n:
        raise RuntimeError(f"{fname}: invalid {what} tensor list (expected length {n}, got "
                           f"{len(lst)})")
    for i, t in enumerate(lst):
        _check_tensor(t, f"{what}_tensor_list")
        if t._data.shape != like._data.shape:
            raise RuntimeError(f"{fname}: invalid tensor size at index {i} (expected "
                               f"{tuple(like._data.shape)}, got {tuple(t._data.shape)})")
        if t.dtype is not like.dtype:
            raise RuntimeError(f"{fname}: invalid tensor type at index {i} (expected "
                               f"{like.dtype}, got {t.dtype})")


def _op(op):
    code = _op_code(op)
    return code, ReduceOp.RedOpType(code)


# --------------------------------------------------------------------------- reductions
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across the group in place: every rank ends with the result."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    code = _op_code(op)
    if not _use_nccl(pg, (tensor,)):
        _verify(pg, "all_reduce", (tensor,))
    return _all_reduce(pg, tensor, code, async_op)


def _all_reduce(pg, tensor, code, async_op):
    """all_reduce without the cross-rank check (DDP's buckets are known to agree)."""
    if _use_nccl(pg, (tensor,)):
        from . import _nccl   # (deferred: loaded for CUDA tensors only)
        return _nccl.all_reduce(pg, tensor, code, async_op)
    a, wb = _buffer(tensor)
    mop = _mpi.mpi_op(code, a, "all_reduce", ReduceOp.RedOpType(code))
    buf = _mpi.typed(a)
    n = pg.size()

    def finish():
        if code == _mpi.AVG:
            _mpi.finish_avg(a, n)
        _commit(tensor, wb)
    IN_PLACE = _mpi.MPI().IN_PLACE
    return _run(pg, async_op, lambda: pg.comm.Allreduce(IN_PLACE, buf, mop),
                lambda: [pg.comm.Iallreduce(IN_PLACE, buf, mop)], finish, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` across the group; the result lands in rank `dst`'s tensor only."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_peer(pg, dst, group_dst, "dst")
    code, name = _op(op)
    if _use_nccl(pg, (tensor,)):
        from . import _nccl   # (deferred: loaded for CUDA tensors only)
        return _nccl.reduce(pg, tensor, root, code, async_op)
    _verify(pg, "reduce", (tensor,))
    a, wb = _buffer(tensor)
    mop = _mpi.mpi_op(code, a, "reduce", name)
    buf = _mpi.typed(a)
    is_root = pg.rank() == root
    send = _mpi.MPI().IN_PLACE if is_root else buf
    recv = buf if is_root else None
    n = pg.size()

    def finish():
        if is_root:
            if code == _mpi.AVG:
                _mpi.finish_avg(a, n)
            _commit(tensor, wb)
    return _run(pg, async_op, lambda: pg.comm.Reduce(send, recv, mop, root),
                lambda: [pg.comm.Ireduce(send, recv, mop, root)], finish, [tensor])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input` (group size x output's elements) and give rank i the i-th block."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    if pg is None:
        return None
    n = pg.size()
    if input._data.size != n * output._data.size:
        raise RuntimeError("input tensor must be the same size as output size times world "
                           "size")
    if input.dtype is not output.dtype:
        raise TypeError("input tensor must be the same type as the output tensor.")
    code, name = _op(op)
    if _use_nccl(pg, (output,)):
        from . import _nccl   # (deferred: loaded for CUDA tensors only)
        return _nccl.reduce_scatter_tensor(pg, output, input, code, async_op)
    _verify(pg, "reduce_scatter_tensor", (output, input))
    src, _ = _buffer(input)
    a, wb = _buffer(output)
    mop = _mpi.mpi_op(code, a, "reduce_scatter_tensor", name)
    sbuf, rbuf = _mpi.typed(src), _mpi.typed(a)

    def finish():
        if code == _mpi.AVG:
            _mpi.finish_avg(a, n)
        _commit(output, wb)
    return _run(pg, async_op, lambda: pg.comm.Reduce_scatter_block(sbuf, rbuf, mop),
                lambda: [pg.comm.Ireduce_scatter_block(sbuf, rbuf, mop)], finish, [output])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce the i-th tensors of `input_list` across ranks into rank i's `output`."""
    _check_tensor(output, "output")
    pg = _resolve(group)
    if pg is None:
        return None
    _check_list(input_list, pg.size(), output, "reduce_scatter", "input")
    from .. import stack   # (cycle: import ember loads this module before ember.stack)
    return reduce_scatter_tensor(output, stack(list(input_list)).detach(), op, group,
                                 async_op)


# --------------------------------------------------------------------------- moves
def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank `src`'s tensor into every rank's tensor."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_peer(pg, src, group_src, "src")
    if not _use_nccl(pg, (tensor,)):
        _verify(pg, "broadcast", (tensor,))
    return _broadcast(pg, tensor, root, async_op)


def _broadcast(pg, tensor, root, async_op=False):
    if _use_nccl(pg, (tensor,)):
        from . import _nccl   # (deferred: loaded for CUDA tensors only)
        return _nccl.broadcast(pg, tensor, root, async_op)
    a, wb = _buffer(tensor)
    buf = _mpi.raw(a)
    return _run(pg, async_op, lambda: pg.comm.Bcast(buf, root),
                lambda: [pg.comm.Ibcast(buf, root)], lambda: _commit(tensor, wb), [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's input along dim 0 (or stack, for an output of shape
    (group size, *input.shape)) into `output_tensor`."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _resolve(group)
    if pg is None:
        return None
    if output_tensor._data.size != pg.size() * input_tensor._data.size:
        raise RuntimeError("output tensor size must be equal to world_size times input tensor "
                           "size")
    if input_tensor.dtype is not output_tensor.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    if _use_nccl(pg, (output_tensor,)):
        from . import _nccl   # (deferred: loaded for CUDA tensors only)
        return _nccl.all_gather_into_tensor(pg, output_tensor, input_tensor, async_op)
    _verify(pg, "all_gather_into_tensor", (input_tensor,))
    src, _ = _buffer(input_tensor)
    a, wb = _buffer(output_tensor)
    sbuf, rbuf = _mpi.raw(src), _mpi.raw(a)
    return _run(pg, async_op, lambda: pg.comm.Allgather(sbuf, rbuf),
                lambda: [pg.comm.Iallgather(sbuf, rbuf)], lambda: _commit(output_tensor, wb),
                [output_tensor])


def _unstack_into(outputs, flat):
    """Copy the blocks of `flat` (len(outputs) x block) into `outputs`."""
    for t, block in zip(outputs, flat):
        t._data[...] = backends.to_device(t._device, block.reshape(t._data.shape))
        bump_version(t)


def _stacked(tensors):
    """One contiguous host array (len x elements) holding `tensors` (a copy)."""
    rows = [backends.to_host(t._device, t._data) for t in tensors]
    return np.stack([np.asarray(r).reshape(-1) for r in rows])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's `tensor`, gathered into `tensor_list` (one tensor per rank)."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    _check_list(tensor_list, pg.size(), tensor, "all_gather")
    _verify(pg, "all_gather", (tensor,))
    src, _ = _buffer(tensor)
    flat = np.empty((pg.size(), src.size), src.dtype)
    sbuf, rbuf = _mpi.raw(src), _mpi.raw(flat)
    return _run(pg, async_op, lambda: pg.comm.Allgather(sbuf, rbuf),
                lambda: [pg.comm.Iallgather(sbuf, rbuf)],
                lambda: _unstack_into(tensor_list, flat), list(tensor_list))


def _root(pg, rank, group_rank, what, tensors, name, check):
    """(root, is_root) of gather or scatter: the list `name` of `tensors` is given, and
    `check`ed, on the root rank only."""
    root = _group_peer(pg, rank, group_rank, what)
    word = "destination" if what == "dst" else "source"
    if pg.rank() == root:
        if tensors is None:
            raise ValueError(f"Argument ``{name}`` must be specified on {word} rank.")
        check()
    elif tensors:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{word} ranks.")
    return root, pg.rank() == root


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's `tensor`, gathered into rank `dst`'s `gather_list`."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root, is_root = _root(pg, dst, group_dst, "dst", gather_list, "gather_list",
                          lambda: _check_list(gather_list, pg.size(), tensor, "gather"))
    _verify(pg, "gather", (tensor,))
    src, _ = _buffer(tensor)
    flat = np.empty((pg.size(), src.size), src.dtype) if is_root else None
    sbuf, rbuf = _mpi.raw(src), (_mpi.raw(flat) if is_root else None)
    finish = (lambda: _unstack_into(gather_list, flat)) if is_root else None
    return _run(pg, async_op, lambda: pg.comm.Gather(sbuf, rbuf, root),
                lambda: [pg.comm.Igather(sbuf, rbuf, root)], finish)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank `src`'s `scatter_list[i]` lands in rank i's `tensor`."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root, is_root = _root(pg, src, group_src, "src", scatter_list, "scatter_list",
                          lambda: _check_list(scatter_list, pg.size(), tensor, "scatter",
                                              "input"))
    _verify(pg, "scatter", (tensor,))
    a, wb = _buffer(tensor)
    flat = _stacked(scatter_list) if is_root else None
    sbuf, rbuf = (_mpi.raw(flat) if is_root else None), _mpi.raw(a)
    return _run(pg, async_op, lambda: pg.comm.Scatter(sbuf, rbuf, root),
                lambda: [pg.comm.Iscatter(sbuf, rbuf, root)], lambda: _commit(tensor, wb))


def _alltoallv(pg, fname, send, send_counts, recv, recv_counts, async_op, finish):
    """Alltoallv in bytes, after checking that what i sends to j is what j expects from i."""
    n = pg.size()
    counts = np.concatenate([send_counts, recv_counts]).astype(np.int64)
    every = np.empty((n, 2 * n), np.int64)
    pg.comm.Allgather(counts, every)
    sent, expected = every[:, :n], every[:, n:]
    if (sent != expected.T).any():
        raise RuntimeError(f"ember.distributed.{fname}: the sizes differ across ranks: bytes "
                           f"sent (row: sender) {sent.tolist()} but bytes expected (row: "
                           f"receiver) {expected.tolist()}")
    sdispl = np.concatenate([[0], np.cumsum(send_counts)[:-1]]).astype(np.int64)
    rdispl = np.concatenate([[0], np.cumsum(recv_counts)[:-1]]).astype(np.int64)
    B = _mpi.MPI().BYTE
    sbuf = [send.reshape(-1).view(np.uint8), (send_counts, sdispl), B]
    rbuf = [recv.reshape(-1).view(np.uint8), (recv_counts, rdispl), B]
    return _run(pg, async_op, lambda: pg.comm.Alltoallv(sbuf, rbuf),
                lambda: [pg.comm.Ialltoallv(sbuf, rbuf)], finish)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank i's `input_tensor_list[j]` lands in rank j's `output_tensor_list[i]`."""
    pg = _resolve(group)
    if pg is None:
        return None
    n = pg.size()
    for what, lst in (("output", output_tensor_list), ("input", input_tensor_list)):
        if len(lst) != n:
            raise RuntimeError(f"all_to_all: invalid {what} tensor list (expected length {n},"
                               f" got {len(lst)})")
    if len({t.dtype for t in list(output_tensor_list) + list(input_tensor_list)}) != 1:
        raise RuntimeError("all_to_all: the tensors must all have the same dtype")
    send = np.concatenate([_stacked([t]).reshape(-1) for t in input_tensor_list])
    out_sizes = [t._data.size for t in output_tensor_list]
    recv = np.empty(sum(out_sizes), send.dtype)
    isz = send.dtype.itemsize
    send_counts = np.array([t._data.size * isz for t in input_tensor_list], np.int64)
    recv_counts = np.array(out_sizes, np.int64) * isz
    bounds = np.cumsum([0] + out_sizes)

    def finish():
        for k, t in enumerate(output_tensor_list):
            _unstack_into([t], recv[bounds[k]:bounds[k + 1]][None])
    return _alltoallv(pg, "all_to_all", send, send_counts, recv, recv_counts, async_op,
                      finish)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split `input` along dim 0 (evenly, or by `input_split_sizes`), send block j to rank j,
    and concatenate what arrives into `output` (split by `output_split_sizes`)."""
    pg = _resolve(group)
    if pg is None:
        return None
    n = pg.size()
    if input.dtype is not output.dtype:
        raise RuntimeError("all_to_all_single: input and output must have the same dtype")

    def counts(t, splits):
        rows = t._data.shape[0] if t._data.ndim else 1
        row = t._data.size // rows if rows else 0
        if splits is None or len(splits) == 0:
            if rows % n:
                raise RuntimeError(f"Tensor's dim 0 does not divide equally across group "
                                   f"size {n}")
            splits = [rows // n] * n
        if len(splits) != n or sum(splits) != rows:
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        return np.array(splits, np.int64) * row * t._data.itemsize
    a, wb = _buffer(output)
    src, _ = _buffer(input)
    return _alltoallv(pg, "all_to_all_single", src, counts(input, input_split_sizes), a,
                      counts(output, output_split_sizes), async_op,
                      lambda: _commit(output, wb))


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reaches this point."""
    pg = _resolve(group)
    if pg is None:
        return None
    return _run(pg, async_op, pg.comm.Barrier, lambda: [pg.comm.Ibarrier()])


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    barrier(group)

