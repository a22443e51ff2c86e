"""The weights_only unpickler: PyTorch's restricted pickle machine, opcode for opcode.

It runs only the opcodes PyTorch's torch/_weights_only_unpickler.py runs (protocol-2
pickles, what torch.save writes), looks globals up in a table instead of importing them,
calls (REDUCE) and instantiates (NEWOBJ) only allow-listed objects, and BUILDs, APPENDs and
SETITEMs only into the types PyTorch allows. So a checkpoint loads here exactly when it loads
in PyTorch with weights_only=True (given the same safe globals), and nothing else is ever
imported or called.
"""
import warnings
from collections import Counter, OrderedDict
from pickle import UnpicklingError, decode_long
from struct import unpack
from sys import maxsize

from .. import _names

# Modules never allowed, even when a user allow-lists something from them (PyTorch's list).
_BLOCKLISTED_MODULES = ("sys", "os", "posix", "nt")

# Python 2 names that protocol-2 pickles carry (PyTorch's torch._utils tables): a whole
# model pickled with protocol 2 names `set` as __builtin__.set.
IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue",
                  "repr": "reprlib", "_abcoll": "collections.abc", "UserDict": "collections",
                  "UserList": "collections", "UserString": "collections", "whichdb": "dbm",
                  "StringIO": "io", "cStringIO": "io"}
NAME_MAPPING = {
    ("__builtin__", "xrange"): ("builtins", "range"),
    ("__builtin__", "reduce"): ("functools", "reduce"),
    ("__builtin__", "intern"): ("sys", "intern"),
    ("__builtin__", "unichr"): ("builtins", "chr"),
    ("__builtin__", "unicode"): ("builtins", "str"),
    ("__builtin__", "long"): ("builtins", "int"),
    ("itertools", "izip"): ("builtins", "zip"),
    ("itertools", "imap"): ("builtins", "map"),
    ("itertools", "ifilter"): ("builtins", "filter"),
    ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
    ("itertools", "izip_longest"): ("itertools", "zip_longest"),
    ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
    ("UserList", "UserList"): ("collections", "UserList"),
    ("UserString", "UserString"): ("collections", "UserString"),
    ("__builtin__", "basestring"): ("builtins", "str"),
    ("exceptions", "StandardError"): ("builtins", "Exception"),
    ("UserDict", "UserDict"): ("collections", "UserDict"),
}

# The opcodes (pickle's one-byte codes) PyTorch's weights_only unpickler implements.
_GLOBAL, _NEWOBJ, _REDUCE, _BUILD = b"c"[0], b"\x81"[0], b"R"[0], b"b"[0]
_APPEND, _APPENDS, _SETITEM, _SETITEMS = b"a"[0], b"e"[0], b"s"[0], b"u"[0]
_MARK, _TUPLE, _TUPLE1, _TUPLE2, _TUPLE3 = b"("[0], b"t"[0], b"\x85"[0], b"\x86"[0], b"\x87"[0]
_NONE, _NEWFALSE, _NEWTRUE = b"N"[0], b"\x89"[0], b"\x88"[0]
_EMPTY_TUPLE, _EMPTY_LIST, _EMPTY_DICT, _EMPTY_SET = b")"[0], b"]"[0], b"}"[0], b"\x8f"[0]
_BININT, _BININT1, _BININT2, _BINFLOAT = b"J"[0], b"K"[0], b"M"[0], b"G"[0]
_BINUNICODE, _SHORT_BINSTRING, _BINPERSID = b"X"[0], b"U"[0], b"Q"[0]
_BINGET, _LONG_BINGET, _BINPUT, _LONG_BINPUT = b"h"[0], b"j"[0], b"q"[0], b"r"[0]
_LONG1, _PROTO, _STOP = b"\x8a"[0], b"\x80"[0], b"."[0]
# (fresh objects for the empty containers: each push is a new one)
_CONSTANTS = {_NONE: lambda: None, _NEWFALSE: lambda: False, _NEWTRUE: lambda: True,
              _EMPTY_TUPLE: tuple, _EMPTY_LIST: list, _EMPTY_DICT: dict, _EMPTY_SET: set}
_LITERALS = frozenset(_CONSTANTS) | {_BININT, _BININT1, _BININT2, _BINFLOAT, _BINUNICODE,
                                     _SHORT_BINSTRING, _LONG1}
_OBJECT_OPS = frozenset({_GLOBAL, _NEWOBJ, _REDUCE, _BUILD, _BINPERSID})
_CONTAINER_OPS = frozenset({_MARK, _TUPLE, _TUPLE1, _TUPLE2, _TUPLE3, _APPEND, _APPENDS,
                            _SETITEM, _SETITEMS})


def read_global(readline):
    """The (module, name) of a GLOBAL instruction, Python 2 names mapped as PyTorch maps
    them."""
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    if (module, name) in NAME_MAPPING:
        module, name = NAME_MAPPING[(module, name)]
    elif module in IMPORT_MAPPING:
        module = IMPORT_MAPPING[module]
    return module, name


def rejected_global_message(full_path):
    """PyTorch's message for a global outside the allow-list (builtins named bare)."""
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    api = f"{_names.MODULE}.serialization"
    return (f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
            f"Please use `{api}.add_safe_globals([{full_path}])` or the "
            f"`{api}.safe_globals([{full_path}])` context manager to allowlist this global "
            "if you trust this class/function.")


class WeightsOnlyUnpickler:
    """`load()` one pickle from `file` with PyTorch's weights_only rules.

    `allowed` and `user_allowed` map 'module.name' to the object a GLOBAL gives;
    `unsupported` maps names PyTorch allows but ember cannot build (quantized dtypes...) to
    the reason; `parameter` and `tensor` are ember's classes (BUILD's special cases)."""

    def __init__(self, file, allowed, user_allowed, unsupported, parameter, tensor,
                 persistent_load=None, encoding="utf-8"):
        self.read, self.readline = file.read, file.readline
        self.allowed, self.user_allowed = allowed, user_allowed
        self.unsupported = unsupported
        self.parameter, self.tensor = parameter, tensor
        self.encoding = encoding
        self.memo = {}
        self.proto = -1
        if persistent_load is not None:
            self.persistent_load = persistent_load
        # identity sets of what may be called / instantiated / built
        self._callable = {id(v) for v in allowed.values()} | \
            {id(v) for v in user_allowed.values()}

    def persistent_load(self, pid):
        raise UnpicklingError("unsupported persistent id encountered")

    def _is_allowed(self, obj):
        return id(obj) in self._callable

    def load(self):
        self.metastack, self.stack = [], []
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            if op in _LITERALS:
                self.stack.append(self._literal(op))
            elif op in _OBJECT_OPS:
                self._object_op(op)
            elif op in _CONTAINER_OPS:
                self._container_op(op)
            elif op == _BINGET or op == _LONG_BINGET:
                i = read(1)[0] if op == _BINGET else unpack("<I", read(4))[0]
                self.stack.append(self.memo[i])
            elif op == _BINPUT or op == _LONG_BINPUT:
                i = read(1)[0] if op == _BINPUT else unpack("<I", read(4))[0]
                self.memo[i] = self.stack[-1]
            elif op == _PROTO:
                self.proto = read(1)[0]
                if self.proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {self.proto} in the checkpoint, which was "
                        f"not the default pickle protocol used by `{_names.MODULE}.load` (2). "
                        "The weights_only Unpickler might not support all instructions "
                        "implemented by this protocol, please file an issue for adding "
                        "support if you encounter this.", stacklevel=4)
            elif op == _STOP:
                return self.stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    def _literal(self, op):
        """The value a constant, number or string opcode pushes."""
        read = self.read
        if op in _CONSTANTS:
            return _CONSTANTS[op]()
        if op == _BININT:
            return unpack("<i", read(4))[0]
        if op == _BININT1:
            return read(1)[0]
        if op == _BININT2:
            return unpack("<H", read(2))[0]
        if op == _BINFLOAT:
            return unpack(">d", read(8))[0]
        if op == _BINUNICODE:
            n = unpack("<I", read(4))[0]
            if n > maxsize:
                raise UnpicklingError("String is too long")
            return str(read(n), "utf-8", "surrogatepass")
        if op == _SHORT_BINSTRING:
            data = read(read(1)[0])
            return data if self.encoding == "bytes" else data.decode(self.encoding, "strict")
        return decode_long(read(read(1)[0]))   # (_LONG1)

    def _object_op(self, op):
        """GLOBAL, NEWOBJ, REDUCE, BUILD and BINPERSID: only allow-listed objects."""
        stack = self.stack
        if op == _GLOBAL:
            stack.append(self._global(*read_global(self.readline)))
        elif op == _NEWOBJ:
            args = stack.pop()
            cls = stack.pop()
            if cls is self.parameter:
                stack.append(self.parameter(*args))
            elif self._is_allowed(cls):
                stack.append(cls.__new__(cls, *args))
            else:
                raise UnpicklingError(
                    "Can only create new object for nn.Parameter or classes allowlisted "
                    f"via `add_safe_globals` but got {cls}")
        elif op == _REDUCE:
            args = stack.pop()
            func = stack[-1]
            if not self._is_allowed(func):
                message = f"Trying to call reduce for unrecognized function {func}"
                if hasattr(func, "__self__"):
                    message += f" which belongs to {func.__self__}"
                raise UnpicklingError(message)
            stack[-1] = func(*args)
        elif op == _BUILD:
            state = stack.pop()
            self._build(stack[-1], state)
        else:   # (_BINPERSID)
            stack.append(self._persistent(stack.pop()))

    def _container_op(self, op):
        """MARK, the TUPLEs, APPEND(S) and SETITEM(S): only into the types PyTorch allows."""
        stack = self.stack
        if op == _MARK:
            self.metastack.append(stack)
            self.stack = []
        elif op == _TUPLE:
            items = self._pop_mark()
            self.stack.append(tuple(items))
        elif op == _TUPLE1:
            stack[-1] = (stack[-1],)
        elif op == _TUPLE2:
            stack[-2:] = [(stack[-2], stack[-1])]
        elif op == _TUPLE3:
            stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
        elif op == _APPEND:
            item = stack.pop()
            if type(stack[-1]) is not list:
                raise UnpicklingError(f"Can only append to lists, but got {type(stack[-1])}")
            stack[-1].append(item)
        elif op == _APPENDS:
            items = self._pop_mark()
            if type(self.stack[-1]) is not list:
                raise UnpicklingError("Can only extend lists, but got "
                                      f"{type(self.stack[-1])}")
            self.stack[-1].extend(items)
        elif op == _SETITEM:
            value, k = stack.pop(), stack.pop()
            self._check_set_item_target("SETITEM")
            stack[-1][k] = value
        else:   # (_SETITEMS)
            items = self._pop_mark()
            self._check_set_item_target("SETITEMS")
            for i in range(0, len(items), 2):
                self.stack[-1][items[i]] = items[i + 1]

    def _global(self, module, name):
        full_path = f"{module}.{name}"
        if module in _BLOCKLISTED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module "
                                  f"{module} is blocked.")
        found = self.allowed.get(full_path, _MISSING)
        if found is _MISSING:
            found = self.user_allowed.get(full_path, _MISSING)
        if found is not _MISSING:
            return found
        reason = self.unsupported.get(full_path)
        if reason is not None:
            raise UnpicklingError(f"GLOBAL {full_path} is allowed by PyTorch's weights_only "
                                  f"load, but ember cannot load it: {reason}")
        raise UnpicklingError(rejected_global_message(full_path))

    def _build(self, inst, state):
        kind = type(inst)
        if kind is self.tensor:
            inst.set_(*state)   # (legacy pickles of plain tensors)
        elif kind is self.parameter:
            inst.__setstate__(state)
        elif kind is OrderedDict:
            inst.__dict__.update(state)
        elif self._is_allowed(kind):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            # (pickle's own load_build: a state dict and optionally one of slots)
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {kind}")

    def _persistent(self, pid):
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got "
                                  f"{type(pid)}")
        if type(pid) is tuple and pid:
            tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if tag != "storage":
                raise UnpicklingError("Only persistent_load of storage is allowed, but got "
                                      f"{type(pid[0])}")
        return self.persistent_load(pid)

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_item_target(self, opcode):
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")


_MISSING = object()


def weights_only_message(message):
    """PyTorch's wrapping of a weights_only UnpicklingError (its load's _get_wo_message)."""
    load = f"{_names.MODULE}.load"
    unsafe = (f"In PyTorch 2.6, we changed the default value of the `weights_only` argument "
              f"in `{load}` from `False` to `True`. Re-running `{load}` with `weights_only` "
              "set to `False` will likely succeed, but it can result in arbitrary code "
              "execution. Do it only if you got the file from a trusted source.")
    docs = (f"\n\nCheck the documentation of {load} to learn more about types accepted by "
            "default with weights_only https://pytorch.org/docs/stable/generated/"
            "torch.load.html.")
    if "was not an allowed global by default." in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have "
                "two options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {unsafe}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message + docs)
    text = f"Weights only load failed. {unsafe}\n"
    if "is blocked" not in message:
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + docs
