"""DistributedDataParallel: one model replica per process, gradients averaged in buckets.

At construction every rank takes rank 0's parameters and buffers (one broadcast per dtype).
In backward each parameter's post-accumulate-grad hook copies its gradient into its bucket;
when a bucket is full its all-reduce starts at once (non-blocking MPI Iallreduce, or NCCL),
in bucket order on every rank, so communication overlaps the rest of backward. The hook of
the last parameter waits for every bucket and writes the averages back into `.grad`
(with gradient_as_bucket_view=True, `.grad` becomes a view into the bucket: no copy back).
After the first iteration the buckets are rebuilt in the order the gradients arrived.
"""
import contextlib
import weakref

from ... import distributed as dist
from ..._device import device
from ..._dtype import int32
from ..._tensor import Tensor, _wrap
from ...backends import array_module
from ...autograd import grad_mode
from ...autograd.graph import _topological_order, edge_of, get_accumulator
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024  # a small first bucket starts communication early

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


def _tensors_in(obj):
    """The tensors inside a forward's output (nested tuples, lists, dicts)."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)


class _Bucket:
    __slots__ = ("indices", "offsets", "flat", "tensor", "pending", "work")

    def __init__(self, indices, params):
        self.indices = indices
        sizes = [params[i]._data.size for i in indices]
        self.offsets = [sum(sizes[:k]) for k in range(len(sizes) + 1)]
        xp = _xp(params[indices[0]])
        p0 = params[indices[0]]
        self.flat = xp.zeros(self.offsets[-1], dtype=p0._data.dtype)
        self.tensor = _wrap(self.flat, p0.dtype, p0._device)
        self.pending = len(indices)
        self.work = None


def _xp(t):
    return array_module(t._data)


class _Reducer:
    """The per-iteration bookkeeping of bucketed gradient averaging."""

    def __init__(self, params, pg, cap_bytes, find_unused, as_view):
        self.params, self.pg = params, pg
        self.find_unused, self.as_view = find_unused, as_view
        self.cap_bytes = cap_bytes
        self._build(reversed(range(len(params))))
        self.arrival = []  # the order gradients arrived in, during the first iteration
        self.rebuilt = False
        self.armed = False
        self.seen = [False] * len(params)
        self.next = 0
        self.unused = ()
        self.first = True
        ref = weakref.ref(self)
        self.handles = [p.register_post_accumulate_grad_hook(self._hook(ref, i))
                        for i, p in enumerate(params)]

    def _build(self, order):
        """Buckets of parameters taken in `order` (first: reverse order, the usual order of
        gradients; after the first iteration: the order they really arrived in)."""
        params = self.params
        self.buckets = self._assign(self.cap_bytes, order)
        self.where = {}  # param index -> (bucket, position in bucket)
        self.views = [None] * len(params)  # each gradient's place in its bucket
        for b, bucket in enumerate(self.buckets):
            for k, i in enumerate(bucket.indices):
                self.where[i] = (b, k)
                self.views[i] = bucket.flat[bucket.offsets[k]:bucket.offsets[k + 1]].reshape(
                    params[i]._data.shape)

    def _rebuild(self):
        """Rebuild the buckets in rank 0's arrival order (as PyTorch does after its first
        iteration), so each bucket fills as early as backward allows."""
        self.rebuilt = True
        order = self.pg.comm.bcast(self.arrival, 0)
        old = self.views
        self._build(order)
        if self.as_view:
            for i, p in enumerate(self.params):
                if p._grad is not None and p._grad._data is old[i]:
                    self.views[i][...] = old[i]
                    p._grad = _wrap(self.views[i], p.dtype, p._device)

    def _assign(self, cap_bytes, order):
        """Buckets of parameters in `order`, one dtype and device per bucket, the first one
        small (its all-reduce starts early)."""
        buckets, open_ = [], {}
        limit = min(_FIRST_BUCKET_BYTES, cap_bytes)
        for i in order:
            p = self.params[i]
            key = (p.dtype, p._device)
            entry = open_.setdefault(key, [[], 0])
            entry[0].append(i)
            entry[1] += p._data.nbytes
            if entry[1] >= limit:
                buckets.append(_Bucket(entry[0], self.params))
                del open_[key]
                limit = cap_bytes
        for indices, _ in open_.values():
            buckets.append(_Bucket(indices, self.params))
        return buckets

    @staticmethod
    def _hook(ref, i):
        def hook(param):
            reducer = ref()
            if reducer is not None and reducer.armed:
                reducer.mark_ready(i)
        return hook

    # -- per iteration
    def prepare(self, outputs):
        """Arm for the backward of this forward's `outputs`."""
        if self.armed and any(self.seen):
            raise RuntimeError(_UNFINISHED)
        if not self.rebuilt and len(self.arrival) == len(self.params):
            self._rebuild()
        self.seen = [False] * len(self.params)
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
            bucket.work = None
        self.next = 0
        self.first = True
        self.armed = True
        if self.find_unused:
            roots = [e[0] for e in map(edge_of, _tensors_in(outputs)) if e is not None]
            reached = set(_topological_order(roots))
            self.unused = [i for i, p in enumerate(self.params)
                           if get_accumulator(p) not in reached]

    def mark_ready(self, i):
        if self.first:
            self.first = False
            for j in self.unused:
                self._ready(j, None)
        self._ready(i, self.params[i].grad)

    def _ready(self, i, grad):
        if self.seen[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of "
                f"the following reasons: 1) Use of a module parameter outside the `forward` "
                f"function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {i} has been marked as ready twice.")
        self.seen[i] = True
        if not self.rebuilt:
            self.arrival.append(i)
        b, k = self.where[i]
        bucket = self.buckets[b]
        lo, hi = bucket.offsets[k], bucket.offsets[k + 1]
        if grad is None:
            bucket.flat[lo:hi] = 0
        elif grad._data is not self.views[i]:
            bucket.flat[lo:hi] = grad._data.reshape(-1)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch()
        elif self.next and self.buckets[self.next - 1].work is not None:
            self.buckets[self.next - 1].work.is_completed()  # drive MPI's progress

    def _launch(self):
        """Start the all-reduce of every full bucket, in bucket order (the same on all ranks:
        MPI collectives must be issued in one order)."""
        n = self.pg.size()
        while self.next < len(self.buckets) and self.buckets[self.next].pending == 0:
            bucket = self.buckets[self.next]
            if bucket.flat.dtype.kind in "fc":
                bucket.flat /= n
            bucket.work = dist.collectives._all_reduce(self.pg, bucket.tensor, 0, True)
            self.next += 1
        if self.next == len(self.buckets):
            self._finalize()

    def _finalize(self):
        self.armed = False
        for bucket in self.buckets:
            bucket.work.wait()
        used = None
        if self.find_unused:
            # A parameter unused on every rank keeps its .grad (None stays None).
            xp = _xp(self.params[0])
            local = xp.ones(len(self.params), dtype="int32")
            local[list(self.unused)] = 0
            flag = _wrap(local, int32, self.params[0]._device)
            dist.collectives._all_reduce(self.pg, flag, 4, False)  # MAX
            used = local
        for bucket in self.buckets:
            for k, i in enumerate(bucket.indices):
                if used is not None and not used[i]:
                    continue
                p = self.params[i]
                view = self.views[i]
                g = p._grad
                if self.as_view:
                    if g is None or g._data is not view:
                        p._grad = _wrap(view, p.dtype, p._device)
                elif g is None:
                    p._grad = _wrap(view.copy(), p.dtype, p._device)
                else:
                    with grad_mode.no_grad():
                        g.copy_(_wrap(view, p.dtype, p._device))


class DistributedDataParallel(Module):
    """Data parallelism over processes: wrap the model, train as usual, gradients are
    averaged across ranks in backward. `module` is the wrapped model; state_dict keys carry
    the `module.` prefix, as PyTorch's."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {p._device for p in module.parameters()}
        if device_ids is not None and (len(devices) > 1 or
                                       next(iter(devices)).type == "cpu"):
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters {devices}.")
        self.module = module
        self.device_ids = None if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        pg = dist.distributed_c10d._resolve(process_group)
        self._pg = pg
        self._module_buffers = [b for b in module.buffers()]
        self._verify_params(params)
        if init_sync:
            _broadcast_coalesced(pg, list(module.parameters()) + self._module_buffers)
        self.reducer = _Reducer(params, pg, self.bucket_bytes_cap, find_unused_parameters,
                                gradient_as_bucket_view)

    def _verify_params(self, params):
        """Every rank must wrap the same parameter shapes (else the buckets would differ)."""
        desc = [(str(p.dtype), tuple(p._data.shape)) for p in params]
        every = self._pg.comm.allgather(desc)
        for r, other in enumerate(every):
            if other != desc:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but rank {self._pg.rank()} has "
                    f"{len(desc)} params with shapes {[d[1] for d in desc]}, while rank {r} "
                    f"has {len(other)} params with shapes {[d[1] for d in other]}.")

    def forward(self, *inputs, **kwargs):
        reducer = self.reducer
        if reducer.armed and any(reducer.seen):
            raise RuntimeError(_UNFINISHED)
        if self.require_forward_param_sync and self.broadcast_buffers and \
                self._module_buffers:
            _broadcast_coalesced(self._pg, self._module_buffers)
        if self.device_ids:
            dev = device("cuda", self.device_ids[0]) if isinstance(self.device_ids[0], int) \
                else device(self.device_ids[0])
            inputs = tuple(t.to(dev) if isinstance(t, Tensor) else t for t in inputs)
            kwargs = {k: (v.to(dev) if isinstance(v, Tensor) else v)
                      for k, v in kwargs.items()}
        out = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            reducer.prepare(out)
        else:
            reducer.armed = False
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside this block accumulate gradients locally;
        the first synced backward after it averages the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Uneven inputs are not supported: every rank must run the same number of steps."""
        yield

    def _set_static_graph(self):
        self.static_graph = True


def _broadcast_coalesced(pg, tensors):
    """Give every rank rank 0's values of `tensors` (one broadcast per dtype and device)."""
    if pg.size() == 1:
        return
    groups = {}
    for t in tensors:
        groups.setdefault((t.dtype, t._device), []).append(t)
    for (dtype, where), ts in groups.items():
        xp = _xp(ts[0])
        flat = xp.concatenate([t._data.reshape(-1) for t in ts])
        dist.collectives._broadcast(pg, _wrap(flat, dtype, where), 0)
        pos = 0
        with grad_mode.no_grad():
            for t in ts:
                n = t.numel()
                t.copy_(_wrap(flat[pos:pos + n].reshape(t.shape), dtype, where))
                pos += n
