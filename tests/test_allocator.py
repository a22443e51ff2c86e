"""ember's host allocator policy (ember/_allocator.py): applied on glibc at import, skipped when
the user opts out or chose glibc settings, and effective: a freed large block stays in the
heap for reuse instead of being unmapped (and faulted in again next time)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """
import ctypes
import ember
import numpy as np


FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
          "fordblks", "keepcost")


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS]


class MallInfo(ctypes.Structure):   # glibc < 2.33: int fields (enough below 2 GiB)
    _fields_ = [(name, ctypes.c_int) for name in FIELDS]


libc = ctypes.CDLL(None)
try:
    mallinfo2 = libc.mallinfo2
    mallinfo2.restype = MallInfo2
except AttributeError:
    mallinfo2 = libc.mallinfo
    mallinfo2.restype = MallInfo
a = np.ones(3 << 20)     # 24 MiB: above glibc's default mmap threshold
del a
print(ember._allocator.APPLIED, mallinfo2().fordblks)   # free bytes kept in the heap
"""


def _run(**env):
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    full.update(env)
    full["PYTHONPATH"] = ROOT + os.pathsep + full.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=full, timeout=120, check=True).stdout.split()
    return out[0] == "True", int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a glibc policy")
def test_policy_reuses_large_blocks():
    applied, kept = _run()
    assert applied and kept >= 24 << 20     # the freed block waits in the heap for reuse
    applied, kept = _run(EMBER_MALLOC_CACHE="0")
    assert not applied and kept < 24 << 20  # glibc's default: unmapped on free
    assert not _run(MALLOC_ARENA_MAX="2")[0]   # the user's own glibc settings win
