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
