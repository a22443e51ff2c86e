"""ember.nn.parallel (torch.nn.parallel): DistributedDataParallel and DataParallel."""
import warnings

from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401
from .replicate import replicate  # noqa: F401
from .scatter_gather import gather, scatter, scatter_kwargs  # noqa: F401


class DistributedDataParallelCPU(DistributedDataParallel):
    """Deprecated name of DistributedDataParallel (which runs on CPU tensors too)."""

    def __init__(self, *args, **kwargs):
        warnings.warn("`torch.nn.parallel.DistributedDataParallelCPU` is deprecated, please "
                      "use `torch.nn.parallel.DistributedDataParallel` instead.",
                      FutureWarning, stacklevel=2)
        super().__init__(*args, **kwargs)
