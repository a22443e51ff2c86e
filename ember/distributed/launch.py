"""`ember run --nproc-per-node N script.py args`: N processes through mpiexec, with torchrun's
variables set in each, so a program written for torchrun runs unchanged.

The launcher starts `mpiexec -n N python -m ember.distributed.launch --worker script args`;
each worker reads its rank from the MPI launcher's environment (PMI_RANK, PMI_SIZE,
MPI_LOCALRANKID, MPI_LOCALNRANKS), sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, and then runs the
script as `ember run` does. Extra mpiexec options (several machines: `-hosts a,b`) come from
EMBER_MPIEXEC_ARGS.
"""
import os
import shlex
import shutil
import socket
import subprocess
import sys

__all__ = ["launch", "find_mpiexec"]


def find_mpiexec():
    """MPICH's mpiexec: the one beside this Python (PyPI's mpich wheel), else on PATH."""
    here = os.path.dirname(sys.executable)
    found = shutil.which("mpiexec", path=here) or shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("ember run --nproc-per-node needs mpiexec (MPICH), which is not "
                           "installed: pip install mpi4py mpich")
    return found


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc, argv):
    """Run `argv` (what follows `ember run`) on `nproc` processes; returns the exit code."""
    if nproc < 1:
        print(f"ember run: --nproc-per-node must be at least 1, got {nproc}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", str(_free_port()))
    env["EMBER_NPROC_PER_NODE"] = str(nproc)
    cmd = [find_mpiexec(), *shlex.split(env.get("EMBER_MPIEXEC_ARGS", "")), "-n", str(nproc),
           sys.executable, "-m", "ember.distributed.launch", "--worker", *argv]
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130


def _worker(argv):
    env = os.environ
    rank = env.get("PMI_RANK", env.get("OMPI_COMM_WORLD_RANK", "0"))
    size = env.get("PMI_SIZE", env.get("OMPI_COMM_WORLD_SIZE", "1"))
    local = env.get("MPI_LOCALRANKID", env.get("OMPI_COMM_WORLD_LOCAL_RANK", rank))
    nlocal = env.get("MPI_LOCALNRANKS", env.get("OMPI_COMM_WORLD_LOCAL_SIZE",
                                                env.get("EMBER_NPROC_PER_NODE", size)))
    node = str(int(rank) // max(int(nlocal), 1))
    env.update(RANK=rank, WORLD_SIZE=size, LOCAL_RANK=local, LOCAL_WORLD_SIZE=nlocal,
               GROUP_RANK=node, GROUP_WORLD_SIZE=str(-(-int(size) // max(int(nlocal), 1))),
               ROLE_RANK=rank, ROLE_WORLD_SIZE=size, ROLE_NAME="default",
               TORCHELASTIC_RUN_ID=env.get("TORCHELASTIC_RUN_ID", "none"))
    from ..__main__ import main   # (deferred: only the worker process runs the CLI)
    return main(["run", *argv])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(_worker(sys.argv[2:]))
    sys.exit(launch(int(sys.argv[1]), sys.argv[2:]))
