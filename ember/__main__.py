"""The `ember` command: `ember run script.py [args]`, `ember run -m module`, `ember demo`.

Exit status, for every subcommand: 0 on success; 1 when the program fails (its traceback is
printed, as Python prints it); 2 on bad usage (argparse's message); a program's own
`sys.exit(n)` passes through unchanged.
"""
import argparse
import os
import runpy
import sys
import traceback

from . import __version__, debug
from ._alias import install

_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")
_HERE = os.path.abspath(__file__)


def _prepare_aliasing():
    """Put the torch shim first on sys.path and PYTHONPATH (child processes inherit it)."""
    sys.path.insert(0, _SHIM)
    os.environ["PYTHONPATH"] = _SHIM + os.pathsep + os.environ.get("PYTHONPATH", "")
    install()


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _run_parser():
    parser = argparse.ArgumentParser(
        prog="ember run",
        usage="ember run [-h] [--guard[=warn|raise]] [--nproc-per-node N] "
              "(script.py | -m module) [args ...]",
        description="Run a PyTorch program on ember: its torch and torchvision imports "
                    "resolve to ember (in child processes too), as `python script.py args` "
                    "would run it.")
    parser.add_argument("--guard", nargs="?", const="warn", choices=("warn", "raise"),
                        help="name silent numeric traps where they happen (ember.debug): "
                             "warn (the default) or raise")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=_positive_int, metavar="N",
                        help="start N processes through mpiexec, with torchrun's variables")
    parser.add_argument("-m", metavar="module", dest="module",
                        help="run a library module as a script (as python -m)")
    parser.add_argument("script", nargs="?", help="the program to run")
    parser.add_argument("args", nargs="*", help="the program's own arguments, passed unread")
    return parser


def _split_run_argv(argv):
    """(ember's options, the program and its arguments). Everything from the script (or -m)
    on belongs to the program, `-h` and `--guard` included, so it is split off by hand
    before argparse sees the options."""
    i = 0
    while i < len(argv) and argv[i] != "-m" and argv[i].startswith("-"):
        takes_value = argv[i] in ("--nproc-per-node", "--nproc_per_node") or (
            argv[i] == "--guard" and argv[i + 1:i + 2] in (["warn"], ["raise"]))
        i += 2 if takes_value else 1
    return argv[:i], argv[i:]


def _user_traceback(exc):
    """Print `exc` as `python script.py` would: without the frames of ember's launcher and
    runpy above the program's own (a SyntaxError in the script itself has no frames left)."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in (_HERE, runpy.__file__)
                              or tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def run(argv):
    """`ember run`: run a PyTorch program on ember; returns the exit status."""
    parser = _run_parser()
    options, program = _split_run_argv(argv)
    try:
        ns = parser.parse_args(options)
        if not program:
            parser.error("a script or -m module is required")
        if program[0] == "-m" and len(program) < 2:
            parser.error("argument -m: expected one argument")
    except SystemExit as exc:  # argparse's --help (0) or its usage error (2)
        return exc.code
    if ns.guard:
        # NOTE: the guard is switched on through the environment so that child processes
        # (DataLoader workers, spawn) run guarded too.
        os.environ["EMBER_GUARD"] = ns.guard
    if ns.nproc_per_node is not None:
        # (deferred: launch loads subprocess and socket, which only --nproc-per-node needs)
        from .distributed.launch import launch
        return launch(ns.nproc_per_node, program)
    if program[0] != "-m" and not os.path.exists(program[0]):
        # Python's own words (and status) for a missing script.
        print(f"{sys.executable}: can't open file {os.path.abspath(program[0])!r}: [Errno 2] "
              "No such file or directory", file=sys.stderr)
        return 2
    _prepare_aliasing()
    if os.environ.get("EMBER_GUARD"):
        debug.enable_from_environment()
    try:
        if program[0] == "-m":
            sys.argv = [program[1]] + program[2:]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(program[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(program)
            sys.path.insert(0, os.path.dirname(os.path.abspath(program[0])))
            runpy.run_path(program[0], run_name="__main__")
    except Exception as exc:  # (SystemExit and KeyboardInterrupt pass through, as in Python)
        _user_traceback(exc)
        return 1
    return 0


def _parser():
    parser = argparse.ArgumentParser(
        prog="ember", description="ember: a deep-learning framework whose API is PyTorch's.")
    parser.add_argument("--version", action="version", version=f"ember {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    # `ember run` parses its own arguments (run above); this entry is for `ember --help`.
    sub.add_parser("run", help="run a PyTorch program on ember (ember run --help)",
                   add_help=False)
    demo = sub.add_parser(
        "demo", help="train a small CNN on the digits that ship with ember",
        description="Train a small CNN on the handwritten digits that ship with ember, "
                    "print the loss and test accuracy per epoch, save the weights.")
    demo.add_argument("--epochs", type=_positive_int, default=10,
                      help="passes over the training set (default: 10)")
    demo.add_argument("--out", default="ember_demo.pt",
                      help="where to save the weights (default: ember_demo.pt)")
    demo.add_argument("--seed", type=int, default=0, help="ember.manual_seed (default: 0)")
    return parser


def main(argv=None):
    """The console script; returns the exit status (bad usage: 2, never a SystemExit)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "run":
        return run(argv[1:])
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or bad usage (2)
        return exc.code
    if args.command == "demo":
        # (deferred: the demo loads ember.vision, about 90 ms that `ember --help` need not pay)
        from ._demo import demo
        demo(epochs=args.epochs, out=args.out, seed=args.seed)
        return 0
    raise AssertionError(f"unhandled command {args.command!r}")  # argparse allows no other


if __name__ == "__main__":
    sys.exit(main())
