"""Found instead of torchvision only under `ember run`: resolves to ember.vision."""
import importlib
import sys

from ember._alias import install

install()
sys.modules[__name__] = importlib.import_module("ember.vision")
