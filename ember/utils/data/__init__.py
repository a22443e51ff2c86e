"""ember.utils.data (torch.utils.data)."""
from .collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,  # noqa: F401
                      StackDataset, Subset, TensorDataset, random_split)
from .distributed import DistributedSampler  # noqa: F401
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                      SubsetRandomSampler, WeightedRandomSampler)
from .worker import get_worker_info  # noqa: F401
from . import dataloader, dataset, sampler  # noqa: F401

_DATAPIPE_NAMES = ("DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe",
                   "guaranteed_datapipes_determinism", "non_deterministic")


def __getattr__(name):
    # DataPipes load on first use (their built-in forms register as they import), so that
    # `import ember` does not pay for them.
    if name in _DATAPIPE_NAMES:
        from . import builtin_datapipes, datapipes  # noqa: F401
        return getattr(datapipes, name)
    raise AttributeError(f"module 'ember.utils.data' has no attribute '{name}'")
