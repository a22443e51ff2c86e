"""Collectives on picklable Python objects (mpi4py pickles them; tensors included)."""
from .distributed_c10d import _group_peer, _resolve

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list"]


def all_gather_object(object_list, obj, group=None):
    """Fill `object_list` (one slot per rank) with every rank's `obj`."""
    pg = _resolve(group)
    if pg is None:
        return
    every = pg.comm.allgather(obj)
    object_list[:len(every)] = every


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace the contents of every rank's `object_list` with rank `src`'s."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_peer(pg, src, group_src, "src")
    objs = pg.comm.bcast(list(object_list) if pg.rank() == root else None, root)
    if len(objs) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {pg.ranks[root]} sent "
                           f"{len(objs)} objects but this rank's list has {len(object_list)}")
    object_list[:] = objs


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gather every rank's `obj` into rank `dst`'s `object_gather_list`."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_peer(pg, dst, group_dst, "dst")
    if pg.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    every = pg.comm.gather(obj, root)
    if pg.rank() == root:
        object_gather_list[:len(every)] = every


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank i's `scatter_object_output_list[0]` becomes rank `src`'s input list's i-th."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_peer(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    mine = pg.comm.scatter(list(scatter_object_input_list) if pg.rank() == root else None,
                           root)
    scatter_object_output_list[0] = mine
