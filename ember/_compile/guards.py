"""The guards of a capture: what must hold for a recorded program to be replayed (see
ember/_compile/__init__.py for the list). `Entry` keeps one signature's program with its
guards; `matches` is their quick form, the key functions below their full form."""
import functools

from .._tensor import Tensor
from ..amp import autocast_mode
from ..autograd.grad_mode import state as grad_state
from ..nn.modules import module as nn_module

STATE_OF_MODULE = object()   # source of a parameter or buffer: guarded by the module key


class Entry:
    """What one input signature gets: a Program, or eager running with the reasons.

    `matches(args)` is the quick form of the guards for positional arguments that are
    tensors or plain values: each argument against what the capture saw, the global modes,
    the module revision counter (nn/modules/module.py) and the identity of the modules and
    tensors read from outside."""

    def __init__(self, program, reasons, breaks, capture_seconds, recorder, args, roots,
                 fn, state):
        self.program = program
        self.reasons = reasons
        self.breaks = breaks
        self.capture_seconds = capture_seconds
        self.steps = recorder.steps
        self.guards = _identity_guards(recorder) if program is not None else ()
        self.fast_args = _fast_args(args) if program is not None and args is not None \
            else None
        self.tensor_positions = None if self.fast_args is None or \
            all(e.__class__ is tuple for e in self.fast_args) else \
            [i for i, e in enumerate(self.fast_args) if e.__class__ is tuple]
        self.modes = (grad_state.enabled, grad_state.inference, autocast_state())
        self.root_getters = _root_getters(fn, roots)
        self.revision = _module_revision()
        self.state = state   # [(getter, fingerprint)] of the Python values the function reads

    def refresh(self):
        """The module guards were just checked by the full key: the quick path may trust
        the revision counter again."""
        self.revision = _module_revision()

    def guards_hold(self):
        for getter, t in self.guards:
            if getter() is not t:
                return False
        for getter, fingerprint in self.state:
            if _fingerprint(getter()) != fingerprint:
                return False
        return True

    def matches(self, args):
        expected = self.fast_args
        if len(args) != len(expected) or self.revision != _revision().n or \
                grad_state.enabled is not self.modes[0] or \
                grad_state.inference is not self.modes[1] or \
                autocast_state() != self.modes[2]:
            return False
        for a, e in zip(args, expected):
            if e.__class__ is tuple:
                if a.__class__ is not e[0]:
                    return False
                data = a._data
                if (data.shape != e[1] and not _sizes_fit(data.shape, e[1])) or \
                        a.dtype is not e[2] or a._device is not e[3] or \
                        a._requires_grad is not e[4] or (a.grad_fn is None) is not e[5] or \
                        data.flags.c_contiguous is not e[6]:
                    return False
            elif a.__class__ is not e.__class__ or a != e:
                return False
        if len(args) > 1 and len(set(map(id, args))) != len(args):
            return False
        for getter, root in self.root_getters:
            if getter() is not root:
                return False
        return not (self.guards or self.state) or self.guards_hold()


def autocast_state():
    """What autocast decides per op: 0 when no region is open, else the regions' dtypes
    (a record holds the dtypes autocast chose)."""
    if not autocast_mode.active:
        return 0
    return tuple((device, autocast_mode.is_autocast_enabled(device),
                  autocast_mode.get_autocast_dtype(device)) for device in ("cpu", "cuda"))


def _sizes_fit(shape, pattern):
    """`shape` against sizes where None stands for any size but 0 and 1 (dynamic.py)."""
    return len(shape) == len(pattern) and all(
        p == n if p is not None else n > 1 for n, p in zip(shape, pattern))


def _fast_args(args):
    """What `Entry.matches` compares each positional argument with, or None when an
    argument is neither a tensor nor a plain value (that entry is found by its key)."""
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(tensor_key(a))
        elif type(a) in _PLAIN:
            out.append(a)
        else:
            return None
    return out


def _root_getters(fn, roots):
    """How to find each module in reach again (a global or closure cell may be rebound)."""
    return [(getter, value) for value, getter in reachable(fn)
            if getter is not None and any(value is r for r in roots)]


def python_state(fn):
    """[(getter, fingerprint)] of the plain values and containers the function can read
    from outside (reachable: a flag in its globals or closure or on the trainer object of a
    bound method, a cache dict, a list of layers): the capture saw their state at the start
    of the call, and a replay is only right while it stands."""
    return [(getter, _fingerprint(value)) for value, getter in reachable(fn)
            if getter is not None and _fingerprint(value) is not None]


_PLAIN = (int, float, bool, str, bytes, type(None), complex)


def _fingerprint(value):
    """What a guard compares: a plain value itself, a container's length and the identity
    of its items (and keys); None for anything else (modules and tensors have their own
    guards, functions and classes are taken as fixed)."""
    cls = type(value)
    if cls in _PLAIN:
        return (cls, value)
    if cls in (list, tuple, set, frozenset):
        return (cls, len(value), tuple(map(id, value)))
    if cls is dict:
        return (cls, tuple(value), tuple(map(id, value.values())))
    return None


def _module_revision():
    return _revision().n


def _revision():
    return nn_module.revision


def _identity_guards(recorder):
    return [(kind[1], recorder.tensors[i]) for i, kind in enumerate(recorder.kinds)
            if kind is not None and kind[0] == "const" and kind[1] is not None
            and kind[1] is not STATE_OF_MODULE]


STATE_OF_MODULE = object()   # source of a parameter or buffer: guarded by the module key


def spec(obj, tensors):
    """A hashable picture of the arguments with each tensor replaced by its position in
    `tensors` (which it fills); other values by value where hashable, else by identity."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return _TENSOR
    cls = type(obj)
    if cls is tuple or cls is list:
        return (cls, tuple(spec(o, tensors) for o in obj))
    if cls is dict:
        return (dict, tuple((k, spec(v, tensors)) for k, v in obj.items()))
    try:
        hash(obj)
    except TypeError:
        return (cls, id(obj))
    return (cls, obj)


_TENSOR = object()


def tensor_key(t):
    """What the guards compare of a tensor argument: class, shape, dtype, device,
    requires_grad, leaf-ness, contiguity (`Entry.matches` reads them by position)."""
    a = t._data
    return (t.__class__, a.shape, t.dtype, t._device, t._requires_grad, t.grad_fn is None,
            a.flags.c_contiguous)


def aliasing(tensors):
    ids = [id(t) for t in tensors]
    if len(set(ids)) == len(ids):
        return None
    return tuple(ids.index(i) for i in ids)


def modules_key(roots):
    key = []
    for root in roots:
        for m in _walk(root):
            key.append(m.training)
            key.append(tuple(map(id, m._parameters.values())))
            key.append(tuple(map(id, m._buffers.values())))
            key.append(len(m._forward_hooks) + len(m._forward_pre_hooks))
            key.append(tuple((k, v) for k, v in vars(m).items() if type(v) in _PLAIN))
    return tuple(key)


def _walk(module):
    yield module
    for child in module._modules.values():
        if child is not None:
            yield from _walk(child)


def module_class():
    return nn_module.Module


def _is_module(obj):
    return isinstance(obj, module_class())


def _code_of(fn):
    fn = getattr(fn, "__func__", fn)
    if _is_module(fn):
        fn = type(fn).forward
    return fn if hasattr(fn, "__code__") else None


def reachable(fn):
    """(object, getter) for what the function names: its globals and closure cells, a bound
    method's `self` and, when that is not a module, its attributes (a trainer's model and
    optimizer), and one level into the small tuples, lists and dicts among them (modules
    or a batch kept together). `getter` finds the object again, so a guard sees it rebound
    (None: fixed, as a bound method's `self` is)."""
    found = []
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        found.append((owner, None))
        if not _is_module(owner) and hasattr(owner, "__dict__"):
            found.extend((v, functools.partial(_attribute, owner, name))
                         for name, v in vars(owner).items())
    code = _code_of(fn)
    if code is not None:
        g = code.__globals__
        found.extend((g[n], functools.partial(g.get, n))
                     for n in code.__code__.co_names if n in g)
        found.extend((c.cell_contents, functools.partial(getattr, c, "cell_contents"))
                     for c in code.__closure__ or () if _cell_full(c))
    for value, getter in list(found):
        if type(value) in (tuple, list, dict) and len(value) <= _SMALL and getter is not None:
            items = value.items() if type(value) is dict else enumerate(value)
            found.extend((v, functools.partial(_item, getter, k)) for k, v in items)
    return found


# The most items a container in reach may hold for the guards to look inside it (a dict
# of a whole dataset is not walked on every call).
_SMALL = 64


def _cell_full(cell):
    try:
        return cell.cell_contents is not _EMPTY_CELL
    except ValueError:   # (a closure variable not assigned yet)
        return False


_EMPTY_CELL = object()


def sources_of(fn, roots):
    """id(tensor) -> how to find it again, for every tensor the function can read without
    being given it: parameters and buffers (guarded by the module key), tensors in module
    attributes, globals and closure cells (each guarded by identity)."""
    out = {}
    for root in roots:
        for m in _walk(root):
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is not None:
                    out[id(t)] = STATE_OF_MODULE
            for name, v in vars(m).items():
                if isinstance(v, Tensor) and id(v) not in out:
                    out[id(v)] = functools.partial(_attribute, m, name)
    for reader in (fn, roots[0]) if roots and roots[0] is not fn else (fn,):
        for value, getter in reachable(reader):
            if getter is not None and isinstance(value, Tensor):
                out.setdefault(id(value), getter)
    return out


def _item(getter, key):
    try:
        return getter()[key]
    except (IndexError, KeyError, TypeError):
        return None


def _attribute(module, name):
    return vars(module).get(name)
