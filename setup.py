"""The compiled CPU kernels (ember.backends._kernels). Everything else is in pyproject.toml.

The extension is optional: without a C compiler the install still succeeds and ember runs on
its NumPy path (slower, and it says so once). Flags: no -march=native, so one build runs on
every CPU of its architecture (hot loops carry per-CPU clones, see csrc/ember_kernels.h);
-ffp-contract=off because kernels must round exactly where PyTorch rounds, every fused
multiply-add written out as fma(); OpenMP when the compiler has it (kernels then honour
set_num_threads), else one thread."""
import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

OPENMP = ["-fopenmp"]


class BuildWithOptionalOpenMP(build_ext):
    """Build with OpenMP, and once more without it when the compiler or linker refuses."""

    def build_extension(self, ext):
        try:
            ext.extra_compile_args += OPENMP
            ext.extra_link_args += OPENMP
            super().build_extension(ext)
        except Exception:   # (CompileError / LinkError: the compiler lacks OpenMP)
            for flags in (ext.extra_compile_args, ext.extra_link_args):
                for flag in OPENMP:
                    flags.remove(flag)
            super().build_extension(ext)


setup(
    ext_modules=[Extension(
        "ember.backends._kernels",
        sources=sorted(glob.glob("ember/backends/csrc/*.c")),
        depends=glob.glob("ember/backends/csrc/*.h"),
        extra_compile_args=["-std=c11", "-O3", "-ffp-contract=off", "-fno-math-errno",
                            "-fno-trapping-math"],
        extra_link_args=[],
        libraries=["m"],
        optional=True,
    )],
    cmdclass={"build_ext": BuildWithOptionalOpenMP},
)
