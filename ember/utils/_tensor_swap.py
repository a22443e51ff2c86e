"""torch.utils.swap_tensors: two Tensor objects exchange everything they hold.

Every field of ember's Tensor is a slot, so swapping the slots (and the instance dicts and
classes, e.g. a Parameter and a Tensor) moves data, dtype, device, gradient, grad_fn and
version counter across. A leaf's AccumulateGrad node holds a weak reference to its tensor:
it moves with the leaf's fields and is pointed at its new owner, so a graph recorded before
the swap accumulates into the object that now holds that leaf's values, as in PyTorch."""
import weakref

from .._tensor import Tensor

_SLOTS = tuple(s for s in Tensor.__slots__ if s not in ("__dict__", "__weakref__"))


def _check(t, which):
    if not isinstance(t, Tensor):
        raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
    own = 1 if t._accumulator is not None else 0   # (the accumulator's own weak reference)
    if weakref.getweakrefcount(t) > own:
        raise RuntimeError(f"Cannot swap {which} because it has weakref associated with it")


def swap_tensors(t1, t2):
    """Swap the contents, class and attributes of two tensors in place."""
    _check(t1, "t1")
    _check(t2, "t2")
    for name in _SLOTS:
        descriptor = Tensor.__dict__[name]
        a, b = descriptor.__get__(t1), descriptor.__get__(t2)
        descriptor.__set__(t1, b)
        descriptor.__set__(t2, a)
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(d2)
    t2.__dict__.clear()
    t2.__dict__.update(d1)
    t1.__class__, t2.__class__ = type(t2), type(t1)
    for t in (t1, t2):
        if t._accumulator is not None:
            t._accumulator._variable = weakref.ref(t)
