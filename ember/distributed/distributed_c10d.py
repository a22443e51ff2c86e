"""Process groups (torch.distributed.distributed_c10d): init, groups, ranks, reduce ops, Work.

Every process group is an MPI communicator (mpi4py over PyPI's MPICH); a group whose backend
is NCCL also gets a NCCL communicator (CuPy) for CUDA tensors, made on first use.
"""
import enum
import importlib.util
import os
from datetime import timedelta

from .. import cuda
from . import _mpi

__all__ = ["Backend", "ReduceOp", "ProcessGroup", "Work", "GroupMember", "group",
           "init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "is_mpi_available", "is_nccl_available", "is_gloo_available",
           "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
           "new_group", "get_group_rank", "get_global_rank", "get_process_group_ranks",
           "default_pg_timeout"]

default_pg_timeout = timedelta(minutes=30)


class _RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __str__(self):
        return f"RedOpType.{self.name}"

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"


class ReduceOp:
    """Reduction operations: `ReduceOp.SUM`, `AVG`, `PRODUCT`, `MIN`, `MAX`, `BAND`, `BOR`,
    `BXOR` (the members are `ReduceOp.RedOpType` values, as in PyTorch)."""

    RedOpType = _RedOpType

    def __init__(self, op=_RedOpType.SUM):
        self.op = _RedOpType(op)

    def __eq__(self, other):
        return int(self) == int(other)

    def __hash__(self):
        return hash(self.op)

    def __int__(self):
        return int(self.op)

    def __repr__(self):
        return repr(self.op)


for _m in _RedOpType:
    setattr(ReduceOp, _m.name, _m)


def _op_code(op):
    code = int(op.op) if isinstance(op, ReduceOp) else op
    if not isinstance(code, int) or not 0 <= code <= 8:
        raise TypeError(f"expected a ReduceOp, got {op!r}")
    return code


class Backend(str):
    """A backend name, lower case: 'mpi', 'nccl' ('gloo' is accepted and runs on MPI)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"
    XCCL = "xccl"
    backend_list = ["undefined", "gloo", "nccl", "mpi"]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = name.lower()
        if value not in ("gloo", "nccl", "mpi", "undefined"):
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


class Work:
    """What an async collective returns: `wait()` finishes it (and its local post-processing),
    `is_completed()` polls. `requests` are MPI requests; `finish` runs once, after them."""

    __slots__ = ("_requests", "_finish", "_done", "_result", "_statuses")

    def __init__(self, requests=(), finish=None, result=None, statuses=None):
        self._requests = list(requests)
        self._finish = finish
        self._done = False
        self._result = result
        self._statuses = statuses

    def wait(self, timeout=None):
        if not self._done:
            if self._requests:
                _mpi.MPI().Request.Waitall(self._requests, self._statuses)
            self._complete()
        return True

    def _complete(self):
        self._done = True
        self._requests = []
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def is_completed(self):
        if not self._done and (not self._requests
                               or _mpi.MPI().Request.Testall(self._requests,
                                                             self._statuses)):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def synchronize(self):
        self.wait()

    def result(self):
        self.wait()
        return self._result if self._result is not None else []

    def get_future(self):
        return Future(self)


class Future:
    """The future of a Work: `wait()` returns its result (the tensors it wrote); `then(fn)`
    chains fn(future) after it."""

    def __init__(self, work=None, value=None):
        self._work = work
        self._value = value

    def wait(self):
        if self._work is not None:
            self._value = self._work.result()
            self._work = None
        return self._value

    def value(self):
        return self.wait()

    def done(self):
        return self._work is None or self._work.is_completed()

    def set_result(self, value):
        self._work, self._value = None, value

    def then(self, callback):
        return Future(value=callback(self))


def _done_work(result=None):
    w = Work(result=result)
    w._done = True
    return w


class ProcessGroup:
    """A set of ranks with its own communicator: `rank()`, `size()`, `name()`."""

    def __init__(self, comm, ranks, backend, name):
        self.comm = comm
        self.ranks = list(ranks)  # global ranks, in group-rank order
        self._backend = backend
        self.group_name = name
        self._nccl = None
        self._size = comm.Get_size()
        self._rank = comm.Get_rank()

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._backend

    @property
    def group_desc(self):
        return "default_pg" if self.group_name == "0" else "undefined"

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self.group_name} ranks={self.ranks}>"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None


_group_ns = group  # (the `group=` arguments below shadow the class name)


_state = {"world": None, "backend": None, "groups": 0}


def is_available():
    """True where a collective engine is installed (mpi4py, or CuPy's NCCL)."""
    return is_mpi_available() or is_nccl_available()


def is_mpi_available():
    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available():
    # 'gloo' is served by MPI.
    return is_mpi_available()


def is_nccl_available():
    try:
        return importlib.util.find_spec("cupy") is not None and \
            importlib.util.find_spec("cupy.cuda.nccl") is not None
    except (ImportError, ValueError):
        return False


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    return _state["world"] is not None


def _world():
    pg = _state["world"]
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return pg


def _resolve(g):
    """The ProcessGroup for a `group=` argument (None: the default group)."""
    if g is None or g is GroupMember.WORLD:
        return _world()
    if g == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(g).__name__}")
    return g


def _env_int(name):
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's processes (started by `mpiexec -n N` or `ember run --nproc-per-node N`).

    backend: 'mpi'; 'nccl' (CUDA tensors over NCCL through CuPy, CPU tensors over MPI);
    'gloo', accepted for programs written for PyTorch's CPU backend (NOTE: it runs on MPI);
    None: 'nccl' where CUDA and NCCL are available, else 'mpi'. init_method, store and
    timeout are accepted for compatibility: MPI already knows the processes. world_size and
    rank, when given (or set in WORLD_SIZE/RANK), must agree with MPI's; a rank that differs
    from the MPI rank renumbers the processes accordingly.
    """
    if _state["world"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is None:
        backend = "nccl" if cuda.is_available() and is_nccl_available() else "mpi"
    if isinstance(backend, str) and ":" in backend:
        # PyTorch's "cpu:gloo,cuda:nccl" form: the CUDA entry decides.
        parts = dict(p.split(":", 1) for p in backend.split(","))
        backend = parts.get("cuda", parts.get("cpu", "mpi"))
    backend = Backend(backend)
    if not is_mpi_available():
        raise RuntimeError("ember.distributed needs mpi4py and an MPI library, which are not "
                           "installed: pip install mpi4py mpich")
    MPI = _mpi.MPI()
    world = MPI.COMM_WORLD
    size = world.Get_size()
    if world_size in (-1, None):
        world_size = _env_int("WORLD_SIZE") if init_method in (None, "env://") else None
    if rank in (-1, None):
        rank = _env_int("RANK") if init_method in (None, "env://") else None
    if world_size is not None and world_size != size:
        raise RuntimeError(
            f"init_process_group: world_size={world_size} but this job has {size} MPI "
            f"process(es); start it with `mpiexec -n {world_size} python script.py` or "
            f"`ember run --nproc-per-node {world_size} script.py`")
    if rank is not None and not 0 <= rank < size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                         f"{size - 1}]")
    key = world.Get_rank() if rank is None else rank
    comm = world.Split(0, key)
    if comm.Get_rank() != key:
        raise RuntimeError("init_process_group: two processes asked for the same rank "
                           f"{key}")
    ranks = list(range(size))
    pg = ProcessGroup(comm, ranks, backend, "0")
    _state.update(world=pg, backend=backend, groups=1)
    GroupMember.WORLD = group.WORLD = pg
    from ._failure import install   # (deferred: loaded once a group starts)
    install(pg)
    if backend == "nccl":
        from . import _nccl   # (cycle: _nccl imports this module)
        _nccl.prepare(pg, device_id)


def destroy_process_group(group=None):
    """Free a group's communicator (the default group: all of them, and leave the job)."""
    pg = _resolve(group)
    if pg is None:
        return
    if pg is _state["world"]:
        _state.update(world=None, backend=None, groups=0)
        GroupMember.WORLD = _group_ns.WORLD = None
    if pg.comm is not None:
        pg.comm.Free()
        pg.comm = None


def get_rank(group=None):
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group):
    pg = _resolve(group)
    return list(pg.ranks)


def get_group_rank(group, global_rank):
    pg = _resolve(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg.ranks.index(global_rank)


def get_global_rank(group, group_rank):
    pg = _resolve(group)
    if not 0 <= group_rank < len(pg.ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg.ranks[group_rank]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of `ranks` (global ranks; all of them when None). Every process of the default
    group must call it, members or not; non-members get GroupMember.NON_GROUP_MEMBER."""
    world = _world()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError("ranks passed to new_group must be unique")
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    me = world.rank()
    MPI = _mpi.MPI()
    member = me in ranks
    comm = world.comm.Split(0 if member else MPI.UNDEFINED, ranks.index(me) if member else 0)
    name = str(_state["groups"])
    _state["groups"] += 1
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, ranks, Backend(backend) if backend else world._backend, name)


def _group_peer(pg, rank, group_rank, what):
    """A peer's rank inside `pg`, from a global rank or a group rank (PyTorch's rules)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    if rank is None:
        return 0
    if rank not in pg.ranks:
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg.ranks.index(rank)
