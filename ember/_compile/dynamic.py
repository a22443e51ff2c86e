"""Automatic dynamic sizes: a second capture of a function whose tensor arguments differ from
an earlier capture's only in some sizes, and whose program came out step for step the same
(no size reached a param, a factory's arguments or a Python decision), shows the program
does not depend on those sizes. The earlier entry then accepts any size there, except 0 and
1, which stay specialized as in PyTorch (broadcasting and emptiness change what ops do)."""
from .capture import Slot

__all__ = ["generalize"]


def generalize(old, new):
    """Widen `old` (an Entry) to accept `new`'s sizes when the two programs are the same;
    True when it did."""
    if old.program is None or new.program is None or old.fast_args is None or \
            new.fast_args is None or len(old.fast_args) != len(new.fast_args) or \
            old.modes != new.modes:
        return False
    wild = []
    for a, b in zip(old.fast_args, new.fast_args):
        if (a.__class__ is tuple) != (b.__class__ is tuple):
            return False
        if a.__class__ is not tuple:
            if a.__class__ is not b.__class__ or a != b:
                return False
            wild.append(a)
            continue
        if a[0] is not b[0] or a[2:] != b[2:] or len(a[1]) != len(b[1]):
            return False
        sizes = []
        for m, n in zip(a[1], b[1]):
            if m == n:
                sizes.append(m)
            elif m is None and n not in (0, 1) or m not in (0, 1, None) and n not in (0, 1):
                sizes.append(None)
            else:
                return False
        wild.append((a[0], tuple(sizes)) + a[2:])
    if not same_program(old.program, new.program):
        return False
    old.fast_args = wild
    return True


def same_program(p, q):
    if len(p.steps) != len(q.steps) or p.inputs != q.inputs or \
            not _same(p.output, q.output) or \
            [i for i, _ in p.constants] != [i for i, _ in q.constants] or \
            any(a is not b and not _same(a, b) for (_, a), (_, b) in
                zip(p.constants, q.constants)):
        return False
    for s, t in zip(p.steps, q.steps):
        if s.kind != t.kind or s.fn is not t.fn or s.dtype != t.dtype or \
                s.grad_enabled != t.grad_enabled or s.rename != t.rename or \
                not _same(s.args, t.args) or not _same(s.params, t.params) or \
                not _same(s.outs, t.outs) or not _same(s.param_refs, t.param_refs) or \
                not _same(s.arrays, t.arrays) or not _same(s.fresh, t.fresh):
            return False
    return True


def _same(a, b):
    """Structural equality where Slots compare by index and arrays or other objects by
    identity (a size hidden in an array param makes two programs different)."""
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is Slot:
        return a.index == b.index
    if a.__class__ in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if a.__class__ is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if a.__class__ in (int, float, bool, str, complex, type(None), slice):
        return a == b
    return a is b or (not hasattr(a, "dtype") and _plain_equal(a, b))


def _plain_equal(a, b):
    try:
        return bool(a == b)
    except Exception:   # (objects whose == raises or is elementwise)
        return False
