"""Write tests/data/model_refs/<case>.npz: torchvision's outputs for ember's models.

For each forward case (tests/data/model_refs/cases.py) the model is built in ember, its
state_dict saved with ember.save, loaded into torchvision's model with strict=True and run in
eval mode; the logits and the state_dict's names and shapes are stored. For each init case
torchvision's model is built after torch.manual_seed(SEED) and checksums of its initial weights
are stored, once per build of PyTorch's random kernels (INIT_BUILDS): PyTorch compiles them for
DEFAULT and AVX2 only (AVX512 runs the AVX2 build) and the two draw different normal and
uniform values for the same seed. torch reads ATEN_CPU_CAPABILITY once, at start-up, so each
build runs in a child process of this script with the variable set. Arrays already in a file
that this run does not compute are kept. Run with an interpreter that has torch, torchvision
and ember importable:

    PYTHONPATH=. /work/venv_tv/bin/python scripts/make_model_refs.py [--init | --forward] [case ...]

--init computes only the init references, --forward only the forward ones (default: both).
"""
import os
import subprocess
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

# suffix of the init_first / init_checksums keys -> (ATEN_CPU_CAPABILITY of the child process,
# the capabilities torch may report there); init_keys and init_shapes are the same for both
INIT_BUILDS = {"": ("avx2", ("AVX2", "AVX512")), "_default": ("default", ("DEFAULT",))}
INIT_BY_BUILD = ("init_first", "init_checksums")
WORKER = "--init-worker"


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
    """The init reference of `name` for this process's build of the random kernels."""
    torch.manual_seed(cases.SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tv = cases.build_init_model(torchvision.models, name)
    state = {k: v.numpy() for k, v in tv.state_dict().items()}
    keys, shapes = _layout(state)
    first = np.concatenate([v.reshape(-1)[:4].astype(np.float64) for v in state.values()])
    return {"init_keys": keys, "init_shapes": shapes, "init_checksums": cases.checksums(state),
            "init_first": first}


def init_worker(path, names):
    """Child process: the init references of `names` for this process's build, to `path`."""
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    arrays = {"__capability__": np.asarray(torch.backends.cpu.get_cpu_capability())}
    for name in names:
        arrays.update({f"{name}/{k}": v for k, v in init_case(name).items()})
    np.savez(path, **arrays)


def init_refs(names, tmp):
    """name -> the init arrays of every build in INIT_BUILDS, each computed in a child."""
    out = {name: {} for name in names}
    for suffix, (env_value, reported) in INIT_BUILDS.items():
        path = os.path.join(tmp, f"init{suffix or '_avx2'}.npz")
        env = dict(os.environ, ATEN_CPU_CAPABILITY=env_value)
        subprocess.run([sys.executable, os.path.abspath(__file__), WORKER, path, *names],
                       env=env, check=True)
        with np.load(path) as got:
            capability = str(got["__capability__"])
            if capability not in reported:
                sys.exit(f"ATEN_CPU_CAPABILITY={env_value}: torch runs {capability}, not "
                         f"{' or '.join(reported)}; this machine cannot make that reference")
            for name in names:
                arrays = {k: got[f"{name}/{k}"] for k in ("init_keys", "init_shapes",
                                                           *INIT_BY_BUILD)}
                for k in ("init_keys", "init_shapes"):
                    if k in out[name] and not np.array_equal(out[name][k], arrays[k]):
                        sys.exit(f"{name}: {k} differs between the builds")
                    out[name][k] = arrays[k]
                for k in INIT_BY_BUILD:
                    out[name][k + suffix] = arrays[k]
        print(f"init references for ATEN_CPU_CAPABILITY={env_value} ({capability}): "
              f"{len(names)} cases")
    return out


def _load(path):
    if not os.path.exists(path):
        return {}
    with np.load(path) as old:
        return {k: old[k] for k in old.files}


def main(argv):
    do_forward = "--init" not in argv
    do_init = "--forward" not in argv
    names = [a for a in argv if not a.startswith("--")]
    names = names or sorted(set(cases.FORWARD) | set(cases.INIT))
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as tmp:
        inits = init_refs([n for n in names if n in cases.INIT], tmp) if do_init else {}
        for name in names:
            path = os.path.join(OUT, name + ".npz")
            old = _load(path)
            arrays = dict(old)
            if do_forward and name in cases.FORWARD:
                arrays.update(forward_case(name, tmp))
            if name in inits:
                arrays.update(inits[name])
            changed = sorted(k for k in arrays if k in old and k != "__versions__"
                             and not np.array_equal(old[k], arrays[k]))
            added = sorted(set(arrays) - set(old))
            print(f"{name}: changed {changed or 'nothing'}, added {added or 'nothing'}")
            if changed or added:
                arrays["__versions__"] = np.asarray(VERSIONS)
                np.savez_compressed(path, **arrays)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT)
                if f.endswith(".npz"))
    print(f"model_refs: {total} bytes in all")


if __name__ == "__main__":
    if sys.argv[1:2] == [WORKER]:
        init_worker(sys.argv[2], sys.argv[3:])
    else:
        main(sys.argv[1:])
