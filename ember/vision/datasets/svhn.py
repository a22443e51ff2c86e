"""SVHN (cropped digits) from the .mat files: root/{train,test,extra}_32x32.mat."""
import os

import numpy as np

from ..._optional import require
from .utils import download_url, fetch_or_explain, verify_str_arg
from .vision import VisionDataset


class SVHN(VisionDataset):
    """`.data` is uint8 (N, 3, 32, 32), `.labels` int64 with label 10 mapped to 0 (torchvision
    keeps `.labels`; `.targets` is the same array). Needs scipy."""

    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat",
                  "train_32x32.mat", "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat",
                 "test_32x32.mat", "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat",
                  "extra_32x32.mat", "a93ce644f1a588dc4d68dda5feec44a7"],
    }
    classes = [str(d) for d in range(10)]

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        import scipy.io as sio   # (deferred: scipy.io costs about 0.2 s to import)
        mat = sio.loadmat(os.path.join(self.root, self.filename))
        self.data = np.transpose(mat["X"], (3, 2, 0, 1))
        labels = mat["y"].astype(np.int64).squeeze()
        # NOTE: the files label the digit 0 as 10
        np.place(labels, labels == 10, 0)
        self.labels = labels
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    @property
    def targets(self):
        return self.labels

    def __getitem__(self, index):
        Image = require("PIL.Image", "SVHN items (PIL images)")
        img, target = self.data[index], int(self.labels[index])
        img = Image.fromarray(np.transpose(img, (1, 2, 0)))
        return self._transformed(img, target)

    def __len__(self):
        return len(self.data)

    def _check_integrity(self):
        return os.path.isfile(os.path.join(self.root, self.filename))

    def download(self):
        if self._check_integrity():
            return
        fetch_or_explain("SVHN", [self.url], self.root, [self.filename],
                         lambda url: download_url(url, self.root, self.filename, self.file_md5))

    def extra_repr(self):
        return f"Split: {self.split}"
