"""The CUDA backend on CuPy (installed lazily by ember.cuda)."""


def install():
    import cupy

    from . import BACKENDS, Backend
    from .. import backends
    if "cuda" in BACKENDS:
        return
    backends._cupy = cupy
    BACKENDS["cuda"] = Backend("cuda", cupy, cupy.asnumpy, cupy.asarray)
