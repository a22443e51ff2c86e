"""ember.backends.cpu (torch.backends.cpu): the CPU capability PyTorch's kernels run at.

PyTorch compiles its CPU kernels once per capability (DEFAULT, AVX2, AVX512 on x86-64) and
picks one at start-up; the pick changes how some results round (random normals, fused
multiply-adds), so ember's random stream replays the kernel of the same capability."""
import os
import platform
import warnings

from . import cpu_kernels

__all__ = ["get_cpu_capability"]

_ENV = "ATEN_CPU_CAPABILITY"
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
_capability = None


def _cpu_features():
    """The x86 SIMD features of this CPU (and OS): from the compiled kernels (cpuid and
    XCR0, as PyTorch's cpuinfo reads them) or, without them, /proc/cpuinfo's flags."""
    if cpu_kernels.compiled is not None:
        return cpu_kernels.compiled.cpu_features()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _compute():
    forced = os.environ.get(_ENV)
    if forced is not None:
        # NOTE: PyTorch compares the exact lower-case names; anything else is warned about
        # and ignored ("AVX2" included).
        if _X86 and forced in ("avx512", "avx2"):
            return forced.upper()
        if forced == "default":
            return "DEFAULT"
        warnings.warn(f"ignoring invalid value for {_ENV}: {forced}", UserWarning,
                      stacklevel=3)
    if not _X86:
        return "DEFAULT"
    flags = _cpu_features()
    if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= flags:
        return "AVX512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    return "DEFAULT"


def get_cpu_capability():
    """'AVX512', 'AVX2' or 'DEFAULT', as torch.backends.cpu.get_cpu_capability() answers on
    the same machine under the same ATEN_CPU_CAPABILITY (read once, at first use)."""
    global _capability
    if _capability is None:
        _capability = _compute()
    return _capability


def fuses_multiply_add():
    """Whether PyTorch's kernels at this capability contract `a * b + c` into one fused
    multiply-add in their scalar loops: the x86 AVX2 build does (compiled with -mfma), and so
    does AVX512 (which runs the AVX2 build of kernels it has no AVX512 build of, the random
    ones among them); the x86 DEFAULT build cannot; on aarch64 FMA is baseline and GCC
    contracts by default."""
    return get_cpu_capability() != "DEFAULT" or not _X86
