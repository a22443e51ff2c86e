#!/usr/bin/env bash
# ember's GPU check, for a machine with an NVIDIA GPU, CuPy and PyTorch's CUDA build installed
# (Python 3.12, no network needed):
#
#     bash scripts/gpu_check.sh            # PYTHON=/path/to/python to pick the interpreter
#
# Sections: environment; tests/test_cuda_gpu.py; benchmarks/gpu_bench.py (ember against torch
# on the GPU); NCCL (tests/dist_scripts/nccl_check.py). Each section has its own time limit
# (all together under 9 minutes) and runs whatever happened before it; a failing section
# prints its error and the script goes on. The exit status is 1 when any section failed.
set -u
set +e
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-python}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
failed=()

# run LIMIT_SECONDS NAME COMMAND...: one section, timed, its failure recorded and reported.
run() {
    local limit=$1 name=$2
    shift 2
    echo
    echo "=== $name (limit ${limit}s) ==="
    local start=$SECONDS rc
    if command -v timeout >/dev/null 2>&1; then
        timeout --kill-after=5 "$limit" "$@"
    else
        "$@"
    fi
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "--- $name: TIMED OUT after ${limit}s (rc=$rc)"
        failed+=("$name")
    elif [ "$rc" -ne 0 ]; then
        echo "--- $name: FAILED (rc=$rc)"
        failed+=("$name")
    else
        echo "--- $name: ok ($((SECONDS - start))s)"
    fi
}

VERSIONS_PY=$(cat <<'EOF'
import platform
import sys

print("python", sys.version.split()[0], "on", platform.platform())
for name in ("numpy", "cupy", "torch"):
    try:
        mod = __import__(name)
    except Exception as exc:  # noqa: BLE001 - report and go on
        print(f"{name}: not importable ({type(exc).__name__}: {exc})")
        continue
    extra = ""
    try:
        if name == "cupy":
            rt = mod.cuda.runtime
            extra = (f" (CUDA runtime {rt.runtimeGetVersion()}, driver {rt.driverGetVersion()},"
                     f" {rt.getDeviceCount()} device(s))")
        elif name == "torch":
            extra = f" (CUDA {mod.version.cuda}, cuda available: {mod.cuda.is_available()})"
    except Exception as exc:  # noqa: BLE001
        extra = f" ({type(exc).__name__}: {exc})"
    print(name, mod.__version__ + extra)
import ember

print("ember", ember.__version__, "from", ember.__file__)
print("ember.cuda.is_available():", ember.cuda.is_available())
if ember.cuda.is_available():
    print("ember device 0:", ember.cuda.get_device_name(0))
EOF
)

# Limits: 15 + 35 + 290 + 100 + 60 s, plus at most 5 s per section to kill a hung one: < 9
# minutes.
run 15 "nvidia-smi -L" nvidia-smi -L
run 35 "versions" "$PY" -c "$VERSIONS_PY"
run 290 "tests" "$PY" -m pytest -q -p no:cacheprovider tests/test_cuda_gpu.py
run 100 "benchmark" "$PY" benchmarks/gpu_bench.py
# NCCL (ember.distributed, backend 'nccl'): one rank per GPU, through mpiexec (mpi4py + mpich,
# the `distributed` extra); the script says so and passes where they are missing.
NGPU=$("$PY" -c "import ember; print(max(ember.cuda.device_count(), 1))" 2>/dev/null || echo 1)
# Lent GPU machines run commands as root, which Open MPI's mpiexec refuses unless told.
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if command -v mpiexec >/dev/null 2>&1; then
    run 60 "nccl" mpiexec -n "$NGPU" "$PY" tests/dist_scripts/nccl_check.py
else
    run 60 "nccl" "$PY" tests/dist_scripts/nccl_check.py
fi

echo
if [ ${#failed[@]} -eq 0 ]; then
    echo "gpu_check: all sections passed (${SECONDS}s)"
    exit 0
fi
echo "gpu_check: failed sections: ${failed[*]} (${SECONDS}s)"
exit 1
