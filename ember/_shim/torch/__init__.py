"""Found instead of PyTorch only under `ember run` (this folder is put first on the path):
it makes `import torch` (in the program and in its child processes) resolve to ember."""
import sys

from ember._alias import install

install()
sys.modules[__name__] = sys.modules["ember"]
