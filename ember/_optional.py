"""Optional dependencies, imported where they are used.

`import ember` (and `import ember.vision`, `ember.utils.tensorboard`, `ember.distributed`)
never imports one of them: each is imported by the first function that needs it, through
`require`, and its absence is an ImportError that says what to install.
"""
import importlib

# The name to give pip for each optional top-level module.
PIP_NAMES = {
    "PIL": "pillow",
    "tensorboardX": "tensorboardX",
    "mpi4py": "mpi4py mpich",
    "cupy": "cupy-cuda12x",
    "cupyx": "cupy-cuda12x",
    "tqdm": "tqdm",
    "safetensors": "safetensors",
    "matplotlib": "matplotlib",
}


def missing_message(top, feature):
    return (f"{feature} requires {top}, which is not installed: "
            f"pip install {PIP_NAMES.get(top, top)}")


def require(module, feature):
    """`import module`, or an ImportError naming the package to install for `feature`.

    NOTE: an ImportError raised from inside an installed package (a broken build, one of its
    own dependencies missing) is passed on unchanged: "not installed" would be a lie there.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.partition(".")[0]
        if exc.name is not None and exc.name.partition(".")[0] != top:
            raise
        raise ModuleNotFoundError(missing_message(top, feature), name=top) from exc
