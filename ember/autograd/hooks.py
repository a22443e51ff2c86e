"""Hook handles: every register_*hook returns a RemovableHandle over a HookDict."""
import weakref
from collections import OrderedDict

class RemovableHandle:
    """Returned by every register_*hook: `remove()` (or leaving its `with` block) unhooks.
    PyTorch's torch.utils.hooks.RemovableHandle (ember.utils.hooks re-exports this class):
    weak references to the hook dicts, `extra_dict` entries removed too, picklable."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else _dead_ref
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        if self.extra_dict_ref is None:
            return (self.hooks_dict_ref(), self.id)
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # NOTE: a pickled handle whose dict was gone comes back holding a dead reference.
        self.hooks_dict_ref = _dead_ref if state[0] is None else weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _dead_ref():
    return None


class HookDict(OrderedDict):
    """The hooks of one kind on one object, by handle id: an ordered dict that a
    RemovableHandle can reference weakly."""


def add_hook(hooks, fn):
    """Store `fn` in `hooks`; the handle that removes it again."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def run_hooks(hooks, grad):
    """Each hook on `grad` in turn; a hook returning a value replaces the gradient."""
    for fn in tuple(hooks.values()):
        result = fn(grad)
        if result is not None:
            grad = result
    return grad
