"""Rank 1 raises while rank 0 waits in a collective: the job must end, non-zero, fast."""
import ember
import ember.distributed as dist

dist.init_process_group("mpi")


def broken_step():
    raise ValueError("rank one exploded")


if dist.get_rank() == 1:
    broken_step()
dist.all_reduce(ember.ones(3))  # rank 0 would wait here forever
print("UNREACHABLE", flush=True)
