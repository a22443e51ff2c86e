"""The compiled CPU kernels (ember.backends._kernels). Everything else is in pyproject.toml.

The extension is optional: without a C compiler the install still succeeds and ember runs on
its NumPy path (slower, and it says so once). Flags: no -march=native, so one build runs on
every CPU of its architecture; -ffp-contract=off because the random kernels must round
exactly where PyTorch rounds, every fused multiply-add written out as fma()."""
from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "ember.backends._kernels",
    sources=["ember/backends/csrc/module.c", "ember/backends/csrc/random.c"],
    depends=["ember/backends/csrc/kernels.h"],
    extra_compile_args=["-std=c11", "-O3", "-ffp-contract=off", "-fno-math-errno",
                        "-fno-trapping-math"],
    libraries=["m"],
    optional=True,
)])
