"""Helpers torch.serialization exposes beside save/load: what a checkpoint would import,
module version checks, a temporary directory, source lookup, SourceChangeWarning."""
import contextlib
import inspect
import os
import pickletools
import shutil
import tempfile
import warnings

from . import _pickling
from ._weights_only import IMPORT_MAPPING, NAME_MAPPING
from ._zip import CheckpointReader, is_zipfile


class SourceChangeWarning(Warning):
    """A pickled module's source differs from the code now loaded."""


SourceChangeWarning.__module__ = "ember.serialization"


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether `module.__version__` is at least `req_version_tuple` (compared field by field
    in the tuple's own types)."""
    parts = module.__version__.split(".")
    try:
        version = tuple(type(want)(parts[i]) for i, want in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except ValueError as exc:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from exc
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        return True


@contextlib.contextmanager
def mkdtemp():
    """A fresh temporary directory, removed with its contents when the block ends."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def get_source_lines_and_file(obj, error_msg=None):
    """(source lines, first line number, file name) of a function or class."""
    filename = None
    try:
        filename = inspect.getsourcefile(obj)
        lines, lineno = inspect.getsourcelines(obj)
    except OSError as exc:
        message = (f"Can't get source for {obj}. TorchScript requires source access in order "
                   "to carry out compilation, make sure original .py files are available.")
        if error_msg:
            message += "\n" + error_msg
        raise OSError(message) from exc
    return lines, lineno, filename


def _pickle_globals(data):
    """'module.name' of every global a pickle would import, in order, once each."""
    found, strings, memo = [], [], {}
    for opcode, arg, _ in pickletools.genops(data):
        name = opcode.name
        if name in ("GLOBAL", "INST"):
            module, attr = arg.split(" ", 1)
            # (protocol 2 names Python 2 modules: mapped as the unpickler maps them)
            if (module, attr) in NAME_MAPPING:
                module, attr = NAME_MAPPING[(module, attr)]
            else:
                module = IMPORT_MAPPING.get(module, module)
            found.append(f"{module}.{attr}")
        elif name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif name in ("MEMOIZE",):
            memo[len(memo)] = strings[-1] if strings else None
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = strings[-1] if strings else None
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            strings.append(memo.get(arg))
        elif name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append(f"{strings[-2]}.{strings[-1]}")
    return list(dict.fromkeys(found))


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint's pickle names that a weights_only load would refuse (neither
    on PyTorch's default allow-list nor among the user's safe globals)."""
    from . import _user_table  # (cycle: ember.serialization imports this module)
    owned = isinstance(f, (str, os.PathLike))
    handle = open(f, "rb") if owned else f
    try:
        if not is_zipfile(handle):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        data = CheckpointReader(handle).read("data.pkl")
    finally:
        if owned:
            handle.close()
    safe = {f"{m}.{n}" for m, n in _pickling.allowed_globals()}
    safe.update(_pickling.unsupported_globals())
    safe.update(_user_table())
    return [name for name in _pickle_globals(data) if name not in safe]
