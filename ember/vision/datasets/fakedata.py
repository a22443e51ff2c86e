"""FakeData: random images, reproducible per index (the same as torchvision's per seed)."""
from ..._dtype import long
from ..._random import get_rng_state, manual_seed, set_rng_state
from ...ops.random_factories import randint, randn
from ..transforms import ToPILImage
from .vision import VisionDataset


class FakeData(VisionDataset):
    """Item i is a standard-normal image drawn after seeding with i + random_offset (the
    global RNG state is restored afterwards), converted to a PIL image, and a random label."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        state = get_rng_state()
        manual_seed(index + self.random_offset)
        img = randn(*self.image_size)
        target = randint(0, self.num_classes, size=(1,), dtype=long)[0]
        set_rng_state(state)
        img, target = self._transformed(ToPILImage()(img), target)
        return img, target.item()

    def __len__(self):
        return self.size
