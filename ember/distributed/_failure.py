"""A failing rank ends the whole job: never a rank left waiting forever in a collective.

An uncaught exception on any rank prints that rank's traceback (prefixed with its rank) and
calls MPI_Abort, which the launcher (hydra) turns into the end of every process, non-zero.
A rank leaving through sys.exit(n != 0) exits at once without MPI_Finalize (which would
wait for the other ranks, perhaps forever); hydra then ends the job with that exit code.
NOTE: `raise SystemExit(n)` by hand is not seen; use sys.exit(n).
"""
import atexit
import os
import sys
import threading
import traceback

from ._mpi import MPI

_installed = {"rank": None, "prev": None, "prev_thread": None, "code": 0}


def _abort(rank, exc_type, exc, tb):
    try:
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        lines = "".join(f"[rank{rank}]: {line}\n" for line in text.rstrip("\n").split("\n"))
        sys.stderr.write(lines)
        sys.stderr.write(f"[rank{rank}]: ember.distributed: rank {rank} failed; aborting the "
                         "job\n")
        sys.stderr.flush()
        sys.stdout.flush()
    finally:
        MPI().COMM_WORLD.Abort(1)


def _excepthook(exc_type, exc, tb):
    if issubclass(exc_type, KeyboardInterrupt) or _installed["rank"] is None:
        _installed["prev"](exc_type, exc, tb)
        if _installed["rank"] is None:
            return
    _abort(_installed["rank"], exc_type, exc, tb)


def _thread_hook(args):
    if args.exc_type is SystemExit or _installed["rank"] is None:
        _installed["prev_thread"](args)
        return
    _abort(_installed["rank"], args.exc_type, args.exc_value, args.exc_traceback)


def _exit(status=None, _real=sys.exit):
    _installed["code"] = status
    _real(status)


def _at_exit():
    code = _installed["code"]
    if code not in (None, 0) and _installed["rank"] is not None:
        code = code if isinstance(code, int) else 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def install(pg):
    """Abort the job on an uncaught exception in this process (main thread or any thread)."""
    if _installed["prev"] is None:
        _installed["prev"] = sys.excepthook
        _installed["prev_thread"] = threading.excepthook
        sys.excepthook = _excepthook
        threading.excepthook = _thread_hook
        sys.exit = _exit
        atexit.register(_at_exit)  # after mpi4py's import: runs before its MPI_Finalize
    _installed["rank"] = MPI().COMM_WORLD.Get_rank() if pg.size() > 1 or \
        MPI().COMM_WORLD.Get_size() > 1 else None
