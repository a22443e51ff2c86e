"""Write tests/data/model_refs/<case>.npz: torchvision's outputs for ember's models.

For each forward case (tests/data/model_refs/cases.py) the model is built in ember, its
state_dict saved with ember.save, loaded into torchvision's model with strict=True and run in
eval mode; the logits and the state_dict's names and shapes are stored. For each init case
torchvision's model is built after torch.manual_seed(SEED) and checksums of its initial weights
are stored. Run with an interpreter that has torch, torchvision and ember importable:

    PYTHONPATH=. /work/venv_tv/bin/python scripts/make_model_refs.py [case ...]
"""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch
import torchvision

import ember
import ember.vision.models  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "model_refs")
sys.path.insert(0, OUT)

import cases  # noqa: E402

VERSIONS = f"torch {torch.__version__}, torchvision {torchvision.__version__}"


def _layout(state):
    return (np.array(list(state)),
            np.array([",".join(map(str, v.shape)) for v in state.values()]))


def forward_case(name, tmp):
    kwargs, shape = cases.FORWARD[name]
    model = cases.build_forward_model(ember, name)
    path = os.path.join(tmp, name + ".pth")
    ember.save(model.state_dict(), path)
    x = cases.input_array(shape)
    with ember.no_grad():
        ours = model(ember.from_numpy(x)).numpy()
    del model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tv = torchvision.models.get_model(name, **kwargs)
    tv.load_state_dict(torch.load(path, weights_only=True), strict=True)
    os.remove(path)
    tv.eval()
    with torch.no_grad():
        logits = tv(torch.from_numpy(x)).numpy()
    keys, shapes = _layout(tv.state_dict())
    err = np.abs(ours - logits).max() / max(np.abs(logits).max(), 1e-30)
    print(f"{name}: logits {logits.shape}, |ember - torchvision| / max = {err:.2e}")
    return {"logits": logits, "keys": keys, "shapes": shapes}


def init_case(name):
    torch.manual_seed(cases.SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tv = cases.build_init_model(torchvision.models, name)
    state = {k: v.numpy() for k, v in tv.state_dict().items()}
    keys, shapes = _layout(state)
    first = np.concatenate([v.reshape(-1)[:4].astype(np.float64) for v in state.values()])
    return {"init_keys": keys, "init_shapes": shapes, "init_checksums": cases.checksums(state),
            "init_first": first}


def main(names):
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    names = names or sorted(set(cases.FORWARD) | set(cases.INIT))
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            arrays = {}
            if name in cases.FORWARD:
                arrays.update(forward_case(name, tmp))
            if name in cases.INIT:
                arrays.update(init_case(name))
            arrays["__versions__"] = np.asarray(VERSIONS)
            np.savez_compressed(os.path.join(OUT, name + ".npz"), **arrays)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT)
                if f.endswith(".npz"))
    print(f"model_refs: {total} bytes in all")


if __name__ == "__main__":
    main(sys.argv[1:])
