"""ember.vision (torchvision): datasets, transforms, utils and models on ember."""
from . import datasets  # noqa: F401
