"""MNIST-format readers: MNIST, FashionMNIST, KMNIST, EMNIST (IDX files, gzipped or not).

Layout (torchvision's): root/<ClassName>/raw/train-images-idx3-ubyte[.gz], ... The legacy
root/<ClassName>/processed/training.pt and test.pt files are read when present.
"""
import gzip
import os
import string
import warnings

import numpy as np

from ..._creation import from_numpy
from ..._optional import require
from ...serialization import load
from .utils import download_and_extract_archive, extract_archive, fetch_or_explain, verify_str_arg
from .vision import VisionDataset

# IDX type codes -> big-endian NumPy dtypes
_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype(">i2"), 12: np.dtype(">i4"),
              13: np.dtype(">f4"), 14: np.dtype(">f8")}


def _read_bytes(path):
    if not os.path.isfile(path) and os.path.isfile(path + ".gz"):
        path = path + ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def read_sn3_pascalvincent_tensor(path, strict=True):
    """Read an IDX file (LeCun's format) into a tensor of its stored dtype."""
    data = _read_bytes(path)
    magic = int.from_bytes(data[0:4], "big")
    ndim, code = magic % 256, magic // 256
    if not (1 <= ndim <= 3 and code in _IDX_TYPES):
        raise ValueError(f"{path} is not an IDX file (magic number {magic:#010x})")
    shape = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], "big") for i in range(ndim)]
    dtype = np.dtype(_IDX_TYPES[code])
    array = np.frombuffer(data, dtype=dtype, offset=4 * (ndim + 1))
    if strict and array.size != int(np.prod(shape)):
        raise ValueError(f"{path}: expected {int(np.prod(shape))} values, got {array.size}")
    array = array[:int(np.prod(shape))].astype(dtype.newbyteorder("="))
    return from_numpy(array.reshape(shape))


def read_label_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != __import__("ember").uint8 or x.ndimension() != 1:
        raise ValueError(f"{path}: labels must be a 1-d uint8 IDX file")
    return x.long()


def read_image_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != __import__("ember").uint8 or x.ndimension() != 3:
        raise ValueError(f"{path}: images must be a 3-d uint8 IDX file")
    return x


class MNIST(VisionDataset):
    """LeCun's MNIST: `.data` uint8 (N, 28, 28), `.targets` int64; items are (PIL "L"
    image, int) before transforms."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if self._check_legacy_exist():
            self.data, self.targets = self._load_legacy_data()
            return
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    # legacy attribute names, kept (with torchvision's warnings)
    def _legacy(self, name, value, new):
        warnings.warn(f"{name} has been renamed {new}", stacklevel=3)
        return value

    @property
    def train_labels(self):
        return self._legacy("train_labels", self.targets, "targets")

    @property
    def test_labels(self):
        return self._legacy("test_labels", self.targets, "targets")

    @property
    def train_data(self):
        return self._legacy("train_data", self.data, "data")

    @property
    def test_data(self):
        return self._legacy("test_data", self.data, "data")

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def _check_legacy_exist(self):
        if not os.path.exists(self.processed_folder):
            return False
        return all(os.path.isfile(os.path.join(self.processed_folder, f))
                   for f in (self.training_file, self.test_file))

    def _load_legacy_data(self):
        name = self.training_file if self.train else self.test_file
        return load(os.path.join(self.processed_folder, name))

    def _raw_names(self):
        return [os.path.splitext(os.path.basename(name))[0] for name, _ in self.resources]

    def _load_data(self):
        prefix = "train" if self.train else "t10k"
        data = read_image_file(os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"))
        targets = read_label_file(os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))
        return data, targets

    def _check_exists(self):
        # a raw file counts when present either decompressed or still gzipped
        return all(os.path.isfile(os.path.join(self.raw_folder, name))
                   or os.path.isfile(os.path.join(self.raw_folder, name + ".gz"))
                   for name in self._raw_names())

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            fetch_or_explain(
                self.__class__.__name__, [m + filename for m in self.mirrors], self.raw_folder,
                [f for f, _ in self.resources],
                lambda url: download_and_extract_archive(url, self.raw_folder,
                                                         filename=filename, md5=md5))

    def __getitem__(self, index):
        Image = require("PIL.Image", "MNIST items (PIL images)")
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        return self._transformed(img, target)

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, in MNIST's format."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST (cursive Japanese), in MNIST's format."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """EMNIST; `split` is one of byclass, bymerge, balanced, letters, digits, mnist.
    Files: root/EMNIST/raw/emnist-<split>-<train|test>-<images-idx3|labels-idx1>-ubyte[.gz].
    NOTE: as in torchvision, images are returned as stored (transposed relative to MNIST)."""

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y",
                       "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.training_file = f"training_{split}.pt"
        self.test_file = f"test_{split}.pt"
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    def _file_prefix(self):
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self):
        return os.path.join(self.raw_folder, self._file_prefix() + "-images-idx3-ubyte")

    @property
    def labels_file(self):
        return os.path.join(self.raw_folder, self._file_prefix() + "-labels-idx1-ubyte")

    def _load_data(self):
        return read_image_file(self.images_file), read_label_file(self.labels_file)

    def _check_exists(self):
        return all(os.path.isfile(f) or os.path.isfile(f + ".gz")
                   for f in (self.images_file, self.labels_file))

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)

        def fetch(url):
            download_and_extract_archive(url, self.raw_folder, md5=self.md5)
            gzip_folder = os.path.join(self.raw_folder, "gzip")
            for name in os.listdir(gzip_folder):
                if name.endswith(".gz"):
                    extract_archive(os.path.join(gzip_folder, name), self.raw_folder)

        names = [os.path.basename(f) for f in (self.images_file, self.labels_file)]
        fetch_or_explain("EMNIST", [self.url], self.raw_folder, names, fetch)
