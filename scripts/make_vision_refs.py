"""Write tests/data/vision_refs.npz: torchvision's outputs on the cases of
tests/data/vision_cases.py. Run with an interpreter that has torch and torchvision:

    /work/venv_tv/bin/python scripts/make_vision_refs.py
"""
import os
import sys

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
sys.path.insert(0, DATA)

import vision_cases  # noqa: E402


def main():
    torch.set_num_threads(1)
    refs = vision_cases.run(torch, torchvision)
    arrays = {k: np.asarray(v) for k, v in refs.items()}
    arrays["__versions__"] = np.asarray(f"torch {torch.__version__}, torchvision "
                                        f"{torchvision.__version__}")
    path = os.path.join(DATA, "vision_refs.npz")
    np.savez_compressed(path, **arrays)
    print(f"wrote {len(arrays)} references to {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
