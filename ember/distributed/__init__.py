"""ember.distributed (torch.distributed): process groups and collectives over MPI and NCCL.

Start the processes with `mpiexec -n N python train.py` (several machines: mpiexec's host
options) or `ember run --nproc-per-node N train.py`, which also sets torchrun's variables
(RANK, WORLD_SIZE, LOCAL_RANK, ...). Collectives run on mpi4py with PyPI's MPICH (the
`distributed` extra), and CUDA tensors over NCCL through CuPy with backend='nccl'.
Importing this module does not start MPI; init_process_group does.
"""
from . import distributed_c10d  # noqa: F401
from ._objects import *  # noqa: F403
from .collectives import *  # noqa: F403
from .distributed_c10d import *  # noqa: F403
from .distributed_c10d import ProcessGroup, Work  # noqa: F401
from .point_to_point import *  # noqa: F403
