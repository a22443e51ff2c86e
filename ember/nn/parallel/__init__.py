"""ember.nn.parallel (torch.nn.parallel): DistributedDataParallel and DataParallel."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401
from .replicate import replicate  # noqa: F401
from .scatter_gather import gather, scatter, scatter_kwargs  # noqa: F401
