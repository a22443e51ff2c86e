"""Digits: the UCI handwritten digits (1,797 8x8 images) that ship inside ember."""
import os

import numpy as np

from ..._creation import from_numpy

_DATA = os.path.join(os.path.dirname(__file__), "data", "digits.npz")


class Digits:
    """The UCI "Optical Recognition of Handwritten Digits" test set (E. Alpaydin, C. Kaynak,
    1998; CC BY 4.0; see data/README.md): 8x8 images of pixel counts 0..16, labels 0..9.

    Split (fixed): sample i is in the test set when i % 5 == 4 (359 images), otherwise in
    the training set (1,438 images). Images come as float32 tensors of shape (1, 8, 8) scaled
    to [0, 1] (pixel / 16), so no image library is needed; `transform` receives that tensor.
    `.data` holds the raw uint8 images (N, 8, 8), `.targets` the int64 labels.
    """

    classes = [str(d) for d in range(10)]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):
        with np.load(_DATA) as archive:
            images, labels = archive["images"], archive["labels"]
        test = np.arange(len(labels)) % 5 == 4
        keep = ~test if train else test
        self.root = root
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self.data = from_numpy(np.ascontiguousarray(images[keep]))
        self.targets = from_numpy(labels[keep].astype(np.int64))
        self._images = (images[keep].astype(np.float32) / 16.0)[:, None]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image = from_numpy(self._images[index])
        target = int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self):
        split = "Train" if self.train else "Test"
        return (f"Dataset Digits\n    Number of datapoints: {len(self)}\n    Root location: "
                f"{self.root}\n    Split: {split}")
