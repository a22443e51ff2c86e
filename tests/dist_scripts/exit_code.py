"""Rank 1 leaves with sys.exit(3) while rank 0 waits in a barrier: no hang either."""
import sys

import ember.distributed as dist

dist.init_process_group("mpi")
if dist.get_rank() == 1:
    sys.exit(3)
dist.barrier()
print("UNREACHABLE", flush=True)
