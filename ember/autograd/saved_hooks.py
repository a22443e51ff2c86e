"""Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks and its relatives).

While a `saved_tensors_hooks(pack, unpack)` region is open, every tensor a graph node saves
for its backward goes through `pack` when the node is recorded, and the VJP sees
`unpack(packed)` when it reads the value. The registry's `_record` calls `pack_node` on the
nodes it makes; the compiled door is switched off meanwhile (`state.active` is one of the
registry's switches), so every call takes the Python door and reaches `_record`.

A node's saved inputs become a `PackedSaved` sequence: indexing or iterating it unpacks, so
the VJPs (which read `ctx.inputs`) need no change. As in PyTorch, a value that went through
hooks is not checked for in-place changes: the pack hook decided what was kept.
"""
import contextlib

from .. import _tensor as _T


class _HookState:
    """The stack of open (pack, unpack) pairs; `active` is its length (the door's switch)."""

    def __init__(self):
        self.stack = []
        self.active = 0
        self.disabled_message = None

    def push(self, pair):
        self.stack.append(pair)
        self.active = len(self.stack)

    def pop(self):
        self.stack.pop()
        self.active = len(self.stack)


state = _HookState()


class PackedSaved:
    """Saved values that went through a pack hook; reading one calls its unpack hook."""

    __slots__ = ("packed", "unpack")

    def __init__(self, values, pack, unpack):
        # (None and Python scalars are kept as they are: only tensors are packed.)
        self.packed = [(True, pack(v)) if isinstance(v, _T.Tensor) else (False, v)
                       for v in values]
        self.unpack = unpack

    def _value(self, entry):
        hooked, value = entry
        if not hooked:
            return value
        t = self.unpack(value)
        if not isinstance(t, _T.Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(t).__name__}")
        return t

    def __len__(self):
        return len(self.packed)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._value(e) for e in self.packed[i]]
        return self._value(self.packed[i])

    def __iter__(self):
        return (self._value(e) for e in self.packed)


class _PackedArrays:
    """A node's saved outputs (kept as arrays, see Node.save_output) behind a pack hook:
    indexing unpacks the output and hands its array to the node."""

    __slots__ = ("saved",)

    def __init__(self, saved):
        self.saved = saved

    def __len__(self):
        return len(self.saved)

    def __getitem__(self, i):
        return self.saved[i]._data

    def __iter__(self):
        return (t._data for t in self.saved)


def pack_node(node, results):
    """Send what `node` (just recorded by the registry) saved through the innermost hooks."""
    pack, unpack = state.stack[-1]
    inputs = node.inputs
    if any(isinstance(x, _T.Tensor) for x in inputs):
        node.inputs = PackedSaved(inputs, pack, unpack)
        node.saved_versions = None   # (PyTorch does not check hooked values' versions)
    out = node._out
    if out is not None:
        saved = PackedSaved(results, pack, unpack)
        # A counter of its own: the output's later in-place changes are not checked.
        node._out = (_PackedArrays(saved), out[1], _T._Version(), 0)


def pack_function_saved(saved):
    """An autograd.Function's save_for_backward tensors through the innermost hooks."""
    pack, unpack = state.stack[-1]
    return PackedSaved(saved, pack, unpack)


class saved_tensors_hooks:
    """Context manager: `pack_hook(tensor)` runs on every tensor saved for backward inside
    it, and `unpack_hook(packed)` gives the tensor back when backward needs it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if state.disabled_message is not None:
            raise RuntimeError(state.disabled_message)
        state.push((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc):
        state.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            # (ember's CPU memory is never pinned: pin_memory changes nothing here)
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, opening saved_tensors_hooks raises RuntimeError(error_message)."""
    if state.active:   # (hooks already open: PyTorch raises the message at once)
        raise RuntimeError(error_message)
    previous = state.disabled_message
    state.disabled_message = error_message
    try:
        yield
    finally:
        state.disabled_message = previous
