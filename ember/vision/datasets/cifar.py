"""CIFAR10 and CIFAR100 from the pickled python batches.

Layout (torchvision's): root/cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}
and root/cifar-100-python/{train, test, meta}.
"""
import os
import pickle

import numpy as np

from ..._optional import require
from .utils import download_and_extract_archive, fetch_or_explain
from .vision import VisionDataset


class CIFAR10(VisionDataset):
    """`.data` is a uint8 NumPy array (N, 32, 32, 3), `.targets` a list of ints; items are
    (PIL RGB image, int) before transforms."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [[f"data_batch_{i}", None] for i in range(1, 6)]
    test_list = [["test_batch", None]]
    meta = {"filename": "batches.meta", "key": "label_names"}

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        data, self.targets = [], []
        for name, _ in (self.train_list if self.train else self.test_list):
            with open(os.path.join(self.root, self.base_folder, name), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            data.append(entry["data"])
            self.targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self._load_meta()

    def _load_meta(self):
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not os.path.isfile(path):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use "
                               "download=True to download it")
        with open(path, "rb") as f:
            self.classes = pickle.load(f, encoding="latin1")[self.meta["key"]]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        Image = require("PIL.Image", "CIFAR items (PIL images)")
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        return self._transformed(img, target)

    def __len__(self):
        return len(self.data)

    def _files(self):
        return [n for n, _ in self.train_list + self.test_list] + [self.meta["filename"]]

    def _check_integrity(self):
        folder = os.path.join(self.root, self.base_folder)
        return all(os.path.isfile(os.path.join(folder, name)) for name in self._files())

    def download(self):
        if self._check_integrity():
            return
        fetch_or_explain(
            self.__class__.__name__, [self.url], os.path.join(self.root, self.base_folder),
            self._files(), lambda url: download_and_extract_archive(
                url, self.root, filename=self.filename, md5=self.tgz_md5))

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100 with its 100 fine labels."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", None]]
    test_list = [["test", None]]
    meta = {"filename": "meta", "key": "fine_label_names"}
