"""Point-to-point messages on ember tensors: send/recv, their nonblocking forms and
batch_isend_irecv, on the tensors' own buffers as the collectives (collectives.py)."""
from . import _mpi
from .collectives import _buffer, _check_tensor, _commit
from .distributed_c10d import Work, _done_work, _group_peer, _resolve

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv"]


def _peer(pg, rank, group_rank, what):
    peer = _group_peer(pg, rank, group_rank, what)
    if peer == pg.rank():
        word = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {word} rank: {word} rank should not be the same as the rank "
                         "of the current process.")
    return peer


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` (blocks until MPI has taken it)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return _done_work()
    peer = _peer(pg, dst, group_dst, "dst")
    a, _ = _buffer(tensor)
    return Work([pg.comm.Isend(_mpi.raw(a), peer, tag)])


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    return work._result


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return _done_work()
    MPI = _mpi.MPI()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "src")
    a, wb = _buffer(tensor)
    status = MPI.Status()
    work = Work([pg.comm.Irecv(_mpi.raw(a), peer, tag)], statuses=[status])

    def finish():
        work._result = pg.ranks[status.Get_source()]
        _commit(tensor, wb)
    work._finish = finish
    return work


class P2POp:
    """One send or receive for batch_isend_irecv: P2POp(dist.isend, tensor, peer)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed"
                             ".isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of the list; returns their Works."""
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]
