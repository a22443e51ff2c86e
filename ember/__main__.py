"""The `ember` command: `ember run script.py [args]`, `ember run -m module`, `ember demo`."""
import argparse
import os
import runpy
import sys

_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")


def _prepare_aliasing():
    """Put the torch shim first on sys.path and PYTHONPATH (child processes inherit it)."""
    sys.path.insert(0, _SHIM)
    os.environ["PYTHONPATH"] = _SHIM + os.pathsep + os.environ.get("PYTHONPATH", "")
    from ._alias import install
    install()


def run(argv):
    """Run a PyTorch program on ember, as `python script.py args` would run it."""
    if not argv:
        print("usage: ember run [--guard[=warn|raise]] [--nproc-per-node N] script.py "
              "[args...] | ember run -m module [args...]",
              file=sys.stderr)
        return 2
    nproc = None
    while argv and argv[0].startswith(("--guard", "--nproc-per-node", "--nproc_per_node")):
        if argv[0].startswith("--nproc"):
            # torchrun's option: N processes through mpiexec (ember.distributed.launch).
            value, argv = (argv[0].partition("=")[2], argv[1:]) if "=" in argv[0] else \
                (argv[1] if len(argv) > 1 else "", argv[2:])
            if not value.isdigit():
                print(f"ember run: --nproc-per-node expects a number, got {value!r}",
                      file=sys.stderr)
                return 2
            nproc = int(value)
            continue
        # NOTE: the guard is switched on through the environment so that child processes
        # (DataLoader workers, spawn) run guarded too.
        mode = argv[0].partition("=")[2] or "warn"
        os.environ["EMBER_GUARD"] = mode
        argv = argv[1:]
    if nproc is not None:
        from .distributed.launch import launch
        return launch(nproc, argv)
    _prepare_aliasing()
    if os.environ.get("EMBER_GUARD"):
        from . import debug
        debug.enable_from_environment()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("Argument expected for the -m option", file=sys.stderr)
            return 2
        sys.argv = [argv[1]] + argv[2:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"{sys.executable}: can't open file {os.path.abspath(script)!r}: [Errno 2] No "
              "such file or directory", file=sys.stderr)
        return 2
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "run":
        try:
            return run(argv[1:])
        except SyntaxError as exc:
            # NOTE: python shows a syntax error without a traceback header; so do we.
            import traceback
            traceback.print_exception(type(exc), exc, None)
            return 1
    parser = argparse.ArgumentParser(prog="ember", description="ember: PyTorch's API on NumPy")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", help="run a PyTorch program on ember")
    demo = sub.add_parser("demo", help="train a small CNN on the digits that ship with ember")
    demo.add_argument("--epochs", type=int, default=None)
    demo.add_argument("--out", default="ember_demo.pt")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import demo as run_demo
        return run_demo(epochs=args.epochs, out=args.out)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
