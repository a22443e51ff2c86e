"""Every collective on every dtype and reduce op, run under mpiexec -n 2 and -n 3 by
tests/test_distributed.py; each rank checks its results against NumPy references."""
import sys
import time

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("gloo")
rank, n = dist.get_rank(), dist.get_world_size()
DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
          ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64,
          ember.complex128]


def check(name, ok, detail=""):
    if not ok:
        raise AssertionError(f"rank {rank}: {name} failed {detail}")


def data(r, dtype, shape=(2, 3)):
    """Rank r's input: small values (exact in every dtype, no overflow in products)."""
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 3 + 1 + r) % 4
    if dtype is ember.bool:
        a = a % 2
    t = ember.tensor(a.tolist(), dtype=ember.float64).to(dtype)
    return t


def arr(t):
    return t.to(ember.complex128 if t.is_complex() else ember.float64).numpy()


def expected(dtype, op, shape=(2, 3)):
    xs = np.stack([arr(data(r, dtype, shape)) for r in range(n)])
    if dtype is ember.bool:
        f = {"SUM": np.any, "AVG": np.any, "MAX": np.any, "PRODUCT": np.all, "MIN": np.all}
        return f[op](xs, 0).astype(float)
    f = {"SUM": np.sum, "AVG": np.sum, "PRODUCT": np.prod, "MIN": np.min, "MAX": np.max}
    out = f[op](xs, 0)
    if op == "AVG":
        out = np.floor_divide(out, n) if not (dtype.is_floating_point or dtype.is_complex) \
            else out / n
    return out


def reductions():
    for dtype in DTYPES:
        for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
            t = data(rank, dtype)
            if dtype.is_complex and op in ("MIN", "MAX"):
                try:
                    dist.all_reduce(t, op=getattr(ReduceOp, op))
                except ValueError as exc:
                    check("complex min/max message",
                          str(exc) == f"all_reduce does not support RedOpType.{op} on "
                          "complex tensors", str(exc))
                    continue
                check("complex min/max raises", False)
            dist.all_reduce(t, op=getattr(ReduceOp, op))
            rtol = 1e-2 if dtype in (ember.float16, ember.bfloat16) else 1e-6
            check(f"all_reduce {op} {dtype}",
                  np.allclose(arr(t), expected(dtype, op), rtol=rtol),
                  f"{t} vs {expected(dtype, op)}")
            # reduce: only dst gets the result
            t = data(rank, dtype)
            dist.reduce(t, dst=n - 1, op=getattr(ReduceOp, op))
            want = expected(dtype, op) if rank == n - 1 else arr(data(rank, dtype))
            if rank == n - 1:
                check(f"reduce {op} {dtype}", np.allclose(arr(t), want, rtol=rtol))
    for op, f in (("BAND", np.bitwise_and), ("BOR", np.bitwise_or), ("BXOR", np.bitwise_xor)):
        t = data(rank, ember.int32)
        dist.all_reduce(t, op=getattr(ReduceOp, op))
        want = f.reduce(np.stack([data(r, ember.int32).numpy() for r in range(n)]), 0)
        check(f"all_reduce {op}", np.array_equal(t.numpy(), want))
    print("OK reductions", flush=True)


def layouts_and_async():
    base = data(rank, ember.float32, (3, 2))
    t = base.t()  # non-contiguous: computed in a copy, written back into the view
    dist.all_reduce(t)
    check("non-contiguous", np.allclose(base.numpy(), expected(ember.float32, "SUM", (3, 2))))
    s = ember.tensor(float(rank + 1))
    dist.all_reduce(s, op=ReduceOp.MAX)
    check("0-dim", s.item() == n)
    t = data(rank, ember.float64)
    v = t._version
    work = dist.all_reduce(t, async_op=True)
    check("async Work", work is not None and hasattr(work, "wait"))
    work.wait()
    check("async result", np.allclose(t.numpy(), expected(ember.float64, "SUM")))
    check("Work.result", work.result()[0] is t and work.is_completed())
    check("version bumped", t._version > v)
    fut = dist.all_reduce(ember.ones(2), async_op=True).get_future()
    check("future", fut.wait()[0].tolist() == [n, n])
    big = ember.ones(3_000_000)  # several MB: exercises the rendezvous protocol
    dist.all_reduce(big, op=ReduceOp.AVG)
    check("large", float(big.min()) == 1.0 and float(big.max()) == 1.0)
    print("OK layouts and async", flush=True)


def moves():
    for dtype in (ember.float32, ember.bfloat16, ember.int64, ember.bool, ember.complex64):
        for src in range(n):
            t = data(rank, dtype)
            dist.broadcast(t, src=src)
            check(f"broadcast {dtype} from {src}", np.array_equal(arr(t), arr(data(src, dtype))))
        outs = [ember.zeros(2, 3, dtype=dtype) for _ in range(n)]
        dist.all_gather(outs, data(rank, dtype))
        check(f"all_gather {dtype}",
              all(np.array_equal(arr(o), arr(data(r, dtype))) for r, o in enumerate(outs)))
    out = ember.zeros(2 * n, 3)
    dist.all_gather_into_tensor(out, data(rank, ember.float32))
    want = np.concatenate([arr(data(r, ember.float32)) for r in range(n)])
    check("all_gather_into_tensor (cat)", np.array_equal(out.numpy(), want))
    out = ember.zeros(n, 2, 3)
    dist.all_gather_into_tensor(out, data(rank, ember.float32), async_op=True).wait()
    check("all_gather_into_tensor (stack)", np.array_equal(out.numpy().reshape(-1, 3), want))
    # gather / scatter
    dst = n - 1
    lst = [ember.zeros(2, 3) for _ in range(n)] if rank == dst else None
    dist.gather(data(rank, ember.float32), lst, dst=dst)
    if rank == dst:
        check("gather", all(np.array_equal(o.numpy(), arr(data(r, ember.float32)))
                            for r, o in enumerate(lst)))
    t = ember.zeros(2, 3)
    src_list = [data(10 + r, ember.float32) for r in range(n)] if rank == 0 else None
    dist.scatter(t, src_list, src=0)
    check("scatter", np.array_equal(t.numpy(), arr(data(10 + rank, ember.float32))))
    # reduce_scatter: rank i gets the sum over ranks of their i-th input
    inputs = [data(rank + 3 * i, ember.float64) for i in range(n)]
    out = ember.zeros(2, 3, dtype=ember.float64)
    dist.reduce_scatter(out, inputs)
    want = sum(arr(data(r + 3 * rank, ember.float64)) for r in range(n))
    check("reduce_scatter", np.allclose(out.numpy(), want))
    out = ember.zeros(2, 3, dtype=ember.float64)
    dist.reduce_scatter_tensor(out, ember.cat(inputs), op=ReduceOp.AVG)
    check("reduce_scatter_tensor AVG", np.allclose(out.numpy(), want / n))
    # all_to_all, uneven: rank i sends i + j + 1 elements to rank j
    ins = [ember.full((rank + j + 1,), float(10 * rank + j)) for j in range(n)]
    outs = [ember.zeros(j + rank + 1) for j in range(n)]
    dist.all_to_all(outs, ins)
    check("all_to_all", all(np.all(o.numpy() == 10 * j + rank) for j, o in enumerate(outs)))
    x = ember.arange(2 * n, dtype=ember.float32) + 100 * rank
    y = ember.zeros(2 * n)
    dist.all_to_all_single(y, x)
    want = np.concatenate([np.arange(2 * rank, 2 * rank + 2) + 100 * j for j in range(n)])
    check("all_to_all_single", np.array_equal(y.numpy(), want))
    print("OK moves", flush=True)


def point_to_point():
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    t = ember.zeros(4, dtype=ember.int64)
    send = dist.isend(ember.full((4,), rank, dtype=ember.int64), dst=nxt)
    recv = dist.irecv(t, src=prv)
    send.wait()
    recv.wait()
    check("isend/irecv ring", t.tolist() == [prv] * 4)
    if rank == 0:
        for r in range(1, n):
            buf = ember.zeros(2, dtype=ember.bfloat16)
            sender = dist.recv(buf)
            check("recv from any source", buf.tolist() == [sender, sender])
    else:
        dist.send(ember.full((2,), rank, dtype=ember.bfloat16), dst=0)
    try:
        dist.send(ember.ones(1), dst=rank)
    except ValueError as exc:
        check("send to self", str(exc) == "Invalid destination rank: destination rank should "
              "not be the same as the rank of the current process.")
    else:
        check("send to self raises", False)
    try:
        dist.all_reduce(ember.ones(1), op=ReduceOp.BAND)
    except RuntimeError as exc:
        check("BAND on float", str(exc) == "Cannot use ReduceOp.BAND with non-integral dtype")
    else:
        check("BAND on float raises", False)
    # (a tag of its own: rank 0 may still be receiving from any source above)
    ops = [dist.P2POp(dist.isend, ember.ones(2) * rank, nxt, tag=5),
           dist.P2POp(dist.irecv, t := ember.zeros(2), prv, tag=5)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check("batch_isend_irecv", t.tolist() == [prv, prv])
    dist.barrier()
    dist.barrier(async_op=True).wait()
    print("OK point to point", flush=True)


def groups_and_objects():
    check("state", dist.is_initialized() and dist.get_backend() == "gloo"
          and dist.is_available())
    g = dist.new_group([0, n - 1])
    if rank in (0, n - 1):
        t = ember.ones(1) * (rank + 1)
        dist.all_reduce(t, group=g)
        check("group all_reduce", t.item() == 1 + n)
        check("group rank", dist.get_rank(g) == (0 if rank == 0 else 1)
              and dist.get_world_size(g) == 2)
        b = ember.full((1,), float(rank))
        dist.broadcast(b, src=n - 1, group=g)
        check("group broadcast by global rank", b.item() == n - 1)
    else:
        check("non-member", g == dist.GroupMember.NON_GROUP_MEMBER
              and dist.all_reduce(ember.ones(1), group=g) is None)
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": rank, "t": ember.ones(2) * rank})
    check("all_gather_object", [o["rank"] for o in objs] == list(range(n))
          and objs[n - 1]["t"].tolist() == [n - 1, n - 1])
    lst = [rank, "x", None] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    check("broadcast_object_list", lst == [1, "x", None])
    out = [None] * n if rank == 0 else None
    dist.gather_object(("g", rank), out, dst=0)
    if rank == 0:
        check("gather_object", out == [("g", r) for r in range(n)])
    box = [None]
    dist.scatter_object_list(box, [f"s{r}" for r in range(n)] if rank == 0 else None, src=0)
    check("scatter_object_list", box == [f"s{rank}"])
    print("OK groups and objects", flush=True)


def mismatch():
    try:
        dist.all_reduce(ember.ones(rank + 1))
    except RuntimeError as exc:
        check("shape mismatch message", "differ across ranks" in str(exc)
              and "rank 1 has float32 [2]" in str(exc), str(exc))
    else:
        check("shape mismatch raises", False)
    try:
        dist.broadcast(ember.ones(2, dtype=ember.float64 if rank else ember.float32), src=0)
    except RuntimeError as exc:
        check("dtype mismatch message", "float64 [2]" in str(exc), str(exc))
    else:
        check("dtype mismatch raises", False)
    print("OK mismatch", flush=True)


if __name__ == "__main__":
    reductions()
    layouts_and_async()
    moves()
    point_to_point()
    groups_and_objects()
    mismatch()
    dist.destroy_process_group()
    check("destroyed", not dist.is_initialized())
    if rank == 0:
        time.sleep(1)  # the other ranks leave first: rank 0 must not be killed for it
    print(f"rank {rank} ALL OK", flush=True)
    sys.stdout.flush()
