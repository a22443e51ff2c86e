"""Fusion of a captured program's elementwise chains.

A run of consecutive fast steps (program.py) of pointwise ops (+ - * /, neg, relu and relu's
backward) on float32 or float64 tensors of one shape becomes one step: one
compiled call (csrc/fused.c) takes each block of elements through every op of the run while
the block sits in L1, and the values only the run itself reads are never stored as arrays.
Each op computes what its eager kernel computes, one IEEE operation per element, so a fused
run gives eager's bits. Chains on other dtypes or with broadcasting operands keep their
steps.

A fused step records no graph node, so it runs only where eager would record none: in a
program that runs with grad mode off (its backward recorded as steps, or a function under
no_grad), or where no operand requires grad. The guards fix the operands' shapes and
dtypes, but not that shapes equal at capture stay equal when sizes are dynamic, nor the
operands' requires_grad and contiguity, nor that nothing watches the door (profiler, vmap,
autocast, instruments): the fused step checks those on each replay and otherwise runs its
steps one by one, as they were captured.
"""
import struct

import numpy as np

from .._tensor import _wrap
from ..autograd.grad_mode import state as grad_state
from ..backends import cpu_kernels, elementwise
from ..ops import registry
from .capture import OP, Slot

_OPCODES = elementwise.CHAIN_OPS
FUSED = "fused"        # the kind of a fused step (capture.py's OP, CALL, SETATTR beside it)


class _Member:
    """One step of a chain: its opcode, operand slots, result slot and result dtype."""

    __slots__ = ("entry", "code", "operands", "out", "dtype")

    def __init__(self, entry, code, operands, out, dtype):
        self.entry, self.code, self.operands, self.out, self.dtype = \
            entry, code, operands, out, dtype


def _member(entry):
    """The chain member a code entry can be, or None."""
    op, what, params, dtype, out = entry[:5]
    if op is not None:   # a fast step: (op, input slots, params, dtype, result slot)
        known = _OPCODES.get(op.name)
        if known is None or params or len(what) != known[1]:
            return None
        return _Member(entry, known[0], tuple(what), out, dtype)
    step = what   # relu's backward reads the forward's output through a param reference
    if (step.kind != OP or step.fn.name != "threshold_backward" or step.grad_enabled or
            step.fresh or step.shared or step.rename or step.arrays is not None or
            len(step.args) != 1 or step.args[0].__class__ is not Slot or len(step.outs) != 1 or
            step.outs[0] is None or set(step.params) != {"output"} or
            set(step.param_refs or ()) != {"output"} or step.param_refs["output"][1] is not None):
        return None
    output = step.param_refs["output"][0].index
    return _Member(entry, _OPCODES["threshold_backward"][0], (step.args[0].index, output),
                   step.outs[0].index, step.dtype)


class _Capture:
    """What the capture saw of each slot: a tensor's dtype and shape, or a constant."""

    def __init__(self, tensors, constants):
        self.tensors, self.constants = tensors, constants

    def tensor(self, slot):
        t = self.constants.get(slot)
        if t is None and slot < len(self.tensors):
            t = self.tensors[slot]
        return t if hasattr(t, "_data") else None

    def key(self, member):
        """(dtype, shape) of a member whose operands are tensors of one float dtype and
        shape, or plain numbers, and whose result has that dtype; else None."""
        first = next((t for t in map(self.tensor, member.operands) if t is not None), None)
        if first is None or first._data.__class__ is not np.ndarray:
            return None
        np_dtype, shape = first._data.dtype, first._data.shape
        result = member.dtype or getattr(self.tensor(member.out), "dtype", None)
        if np_dtype not in elementwise.CHAIN_DTYPES or result is None or result.np != np_dtype:
            return None
        for slot in member.operands:
            t = self.tensor(slot)
            if t is None:
                if elementwise.exact_scalar(self.constants.get(slot), np_dtype) is None:
                    return None
            elif t._data.__class__ is not np.ndarray or t._data.dtype != np_dtype or \
                    t._data.shape != shape:
                return None
        member.dtype = result
        return np_dtype, shape


def fuse(code, tensors, constants, kept, touched, run_step):
    """`code` (program.py's entries) with each run of two or more chainable entries in one
    fused entry. `touched(entry)`: the slots an entry reads or writes; `run_step`: the
    replay's runner of a slow step (for a fused step's fallback)."""
    if cpu_kernels.compiled is None:
        return code
    capture = _Capture(tensors, constants)
    later = [set(kept)]   # later[k]: the slots read by entries k.. or kept
    for entry in reversed(code):
        later.append(later[-1] | touched(entry))
    later.reverse()
    out, run, key = [], [], None
    for k, entry in enumerate(code + [None]):
        member = _member(entry) if entry is not None else None
        member_key = capture.key(member) if member is not None else None
        if member_key is not None:
            if run and member_key == key:
                run.append(member)
                continue
            _flush(out, run, later[k], capture, key, run_step)
            run, key = [member], member_key
            continue
        _flush(out, run, later[k], capture, key, run_step)
        run, key = [], None
        if entry is not None:
            out.append(entry)
    return out


def _flush(out, run, read_later, capture, key, run_step):
    if len(run) >= 2:
        out.append((None, FusedChain(run, read_later, capture, key, run_step),
                    run_fused, None, None))
    else:
        out.extend(m.entry for m in run)


class FusedChain:
    """A fused step. Like a recorded step it has `args` (the slots it reads), `outs` (the
    slots it writes for later steps) and empty `params`, which is what program.py's
    bookkeeping (last uses, liveness) reads."""

    kind = FUSED
    params = {}
    param_refs = fresh = shared = None

    def __init__(self, members, read_later, capture, key, run_step):
        self.members, self.run_step = [m.entry for m in members], run_step
        self.np_dtype = key[0]
        self.dtype = members[-1].dtype
        produced = {m.out for m in members}
        inputs, scalars = [], []
        for m in members:
            for slot in m.operands:
                if slot in produced or slot in inputs or slot in scalars:
                    continue
                (inputs if capture.tensor(slot) is not None else scalars).append(slot)
        outputs = [m.out for m in members if m.out in read_later]
        self.args = tuple(Slot(i) for i in inputs)
        self.outs = tuple(Slot(i) for i in outputs)
        self.internal = tuple(m.out for m in members if m.out not in read_later)
        self.scalars = tuple(elementwise.exact_scalar(capture.constants[s], self.np_dtype)
                             for s in scalars)
        self.program, self.scratch = _allocate(members, inputs, scalars, outputs)

    def __repr__(self):
        return f"FusedChain({len(self.members)} ops, {len(self.args)} in, {len(self.outs)} out)"


def _allocate(members, inputs, scalars, outputs):
    """The instructions (op, dst, a, b) as bytes, and the scratch registers they need.
    Registers: inputs, scalars, outputs, then scratch; a scratch register is reused once
    the value it held has been read for the last time, never by the instruction reading
    it (so a destination never shares memory with an operand)."""
    reg = {slot: r for r, slot in enumerate(inputs + scalars + outputs)}
    first_scratch = len(reg)
    last_read = {}
    for k, m in enumerate(members):
        for slot in m.operands:
            last_read[slot] = k
    free, count, words = [], 0, []
    for k, m in enumerate(members):
        a = reg[m.operands[0]]
        b = reg[m.operands[-1]]
        if m.out not in reg:
            if free:
                reg[m.out] = free.pop()
            else:
                reg[m.out] = first_scratch + count
                count += 1
        words += [m.code, reg[m.out], a, b]
        for slot in set(m.operands):
            if last_read[slot] == k and reg[slot] >= first_scratch:
                free.append(reg[slot])
    return struct.pack(f"{len(words)}i", *words), count


def _door_watched():
    return registry.profiler is not None or registry.instruments or registry._func.depth \
        or registry._autocast.active


def run_fused(chain, values):
    """The fused step at replay: one compiled call when its operands allow, else its
    steps one by one."""
    arrays = []
    first = values[chain.args[0].index]
    shape = first._data.shape
    recording = grad_state.enabled
    for slot in chain.args:
        t = values[slot.index]
        if recording and t._requires_grad:   # eager would record a graph node
            return _run_members(chain, values)
        data = t._data
        if data.__class__ is not np.ndarray or data.dtype != chain.np_dtype or \
                data.shape != shape:
            return _run_members(chain, values)
        if not data.flags.c_contiguous:
            if any(data.strides) or not data.size:
                return _run_members(chain, values)
            data = data[(slice(0, 1),) * data.ndim]   # one value broadcast: it stands for all
        arrays.append(data)
    if _door_watched():
        return _run_members(chain, values)
    results = tuple(np.empty(shape, chain.np_dtype) for _ in chain.outs)
    elementwise.run_chain(chain.program, tuple(arrays), chain.scalars, results, chain.scratch)
    for slot, array in zip(chain.outs, results):
        values[slot.index] = _wrap(array, chain.dtype, first._device)


def _run_members(chain, values):
    for entry in chain.members:
        op, what, params, dtype, out = entry[:5]
        if op is not None:
            values[out] = registry.dispatch(op, [values[i] for i in what], params, dtype)
        else:
            chain.run_step(what, values)
    for slot in chain.internal:
        values[slot] = None
