"""A captured program and its replay: the recorded steps run one after another on the new
inputs, without the Python of the function that was compiled (its modules' `__call__`s,
functional wrappers and argument checks).

Each step runs as eager would run it: an op through the registry's door (so autograd records
eager's graph and `backward()` gives eager's gradients), a recorded call by calling the same
entry point, under the grad mode the capture saw. Results are therefore eager's, bit for bit.
"""
import gc

from ..autograd.grad_mode import state as grad_state
from .._constants import strided as _STRIDED
from ..autograd.graph import topological_order
from ..autograd.node import unshared
from ..debug.state import state as debug_state
from ..backends import cpu_kernels
from ..ops import registry
from . import backward_steps, fusion
from .capture import CALL, OP, Slot


def _fill(template, values):
    """`template` with every Slot replaced by its tensor (lists, tuples and dicts inside)."""
    cls = template.__class__
    if cls is Slot:
        return values[template.index]
    if cls is list or cls is tuple:
        return cls(_fill(t, values) for t in template)
    if cls is dict:
        return {k: _fill(v, values) for k, v in template.items()}
    return template


def _arrays(recipe, args):
    """The arrays a step's caller handed the door, made again from the new inputs."""
    out = []
    for how, x in zip(recipe, args):
        if how is None:
            out.append(x._data)
        elif how.__class__ is tuple:
            out.append(how[1])
        else:
            out.append(x._data.astype(how))
    return out


def _slots_in(template):
    """The slot indices a template (args, params, output) holds, at any depth."""
    cls = template.__class__
    if cls is Slot:
        return {template.index}
    if cls in (list, tuple):
        return set().union(*map(_slots_in, template)) if template else set()
    if cls is dict:
        return _slots_in(list(template.values()))
    return set()


def _live(steps, kept):
    """`steps` without the op calls whose results nothing reads or returns (dead code, as
    compilers drop it): an op is a pure function of its inputs, unless it drew random
    numbers (the stream must advance as in eager). Calls are always kept."""
    live = list(steps)
    while True:
        read = set(kept)
        for step in live:
            read |= _slots_in(step.args) | _slots_in(step.params if step.kind != OP else ()) \
                | _slots_in(list((step.param_refs or {}).values()))
        kept_steps = [step for step in live if step.kind != OP or step.draws or
                      any(o is not None and o.index in read for o in step.outs)]
        if len(kept_steps) == len(live):
            return live
        live = kept_steps


def _touched(entry):
    """The slots a code entry reads or writes."""
    op, what = entry[0], entry[1]
    if op is not None:
        return set(what) | {entry[4]}
    return _slots_in(what.args) | _slots_in(what.params) | \
        _slots_in(list((what.param_refs or {}).values())) | _slots_in(what.outs) | \
        {slot for _, slot, _ in (what.shared or {}).values()}


def _last_uses(code, kept):
    """Per code entry, the slots it reads or writes for the last time (none of `kept`)."""
    last = {}
    for k, entry in enumerate(code):
        for i in _touched(entry):
            last[i] = k
    dead = [[] for _ in code]
    for i, k in last.items():
        if i not in kept:
            dead[k].append(i)
    return dead


def _constant_arrays(step):
    """Per argument, the constant array a step's caller handed the door for a plain value
    (a scalar as a 0-d array of the dtype the op computes in), when its other arguments went
    as their own arrays and the op ran with grad off: the door then takes the constant in
    the value's place (it hands non-tensors to the kernel as they are), so the step is fast.
    Under grad mode the recorded node would keep the array in place of the value; under
    autocast the door would cast the arguments the caller had cast; else None."""
    if step.arrays is None or step.grad_enabled or registry._autocast.active:
        return None
    if any(how is not None and how.__class__ is not tuple for how in step.arrays):
        return None
    return [None if how is None else how[1] for how in step.arrays]


def _plain(template):
    """True when a template holds no Slot below its top level (the replay's fast case)."""
    return all(t.__class__ not in (list, tuple, dict) for t in template)


class Program:
    """`steps` over value slots; `inputs`: (slot, position in the flattened tensor
    arguments); `constants`: (slot, value) for tensors the function reads from outside
    (parameters, buffers, globals) and the plain values op steps take; `output`: the
    returned structure with Slots.

    An op step with one result, only slot arguments, no array recipe or rename, run under
    the grad mode of the call, is "fast": `code` holds it as (op, getter of its inputs,
    params, dtype, result slot), and the replay is one dispatch per step."""

    def __init__(self, recorder, output):
        self.steps = recorder.steps
        kinds = recorder.kinds
        self.inputs = [(i, kind[1]) for i, kind in enumerate(kinds)
                       if kind is not None and kind[0] == "input"]
        self.constants = [(i, recorder.tensors[i]) for i, kind in enumerate(kinds)
                          if kind is not None and kind[0] == "const"]
        self.output = output
        self.size = len(kinds)
        self.freed_outputs, self.engine_reasons = _freed_outputs(recorder, output)
        self.lowered = self.freed_outputs is not None
        if self.lowered:   # (see _freed_outputs)
            for step in self.steps:
                if step.kind == OP:
                    step.grad_enabled, step.rename = False, None
        self.steps = _live(self.steps, _slots_in(output))
        self._link_fresh()
        # The grad mode the loop runs under: the ops' own when they all share one (a whole
        # function under no_grad, a program with its backward as steps), so each is a fast
        # step; else the caller's, and the ops under another mode take the slow path.
        modes = {step.grad_enabled for step in self.steps if step.kind == OP}
        self.mode = modes.pop() if len(modes) == 1 else None
        code = [self._compile(step, recorder.grad_enabled_at_entry if self.mode is None
                              else self.mode, recorder.tensors) for step in self.steps]
        code = fusion.fuse(code, recorder.tensors, dict(self.constants), _slots_in(output),
                           _touched, _run)
        # Each entry ends with the slots whose last reader it is: the replay drops them
        # there, so a tensor lives as long as it would in eager (not to the end of the call).
        dead = _last_uses(code, _slots_in(output))
        self.code = [_with_runner(entry, d, self.lowered) + (tuple(d),)
                     for entry, d in zip(code, dead)]

    def _link_fresh(self):
        """A list or dict param that one step fills (`fresh`: max_pool's saved indices, an
        LSTM's stash) and a later step reads, whole or one item of it (its VJP's door call, in
        a backward recorded as steps), gets a slot: the filling step puts each replay's
        fresh copy there, the reader takes it (or its item) from there."""
        filled = []   # (the capture's list or dict, its slot)
        for step in self.steps:
            if step.kind != OP:
                continue
            for key, value in step.params.items():
                if key in (step.fresh or ()):
                    continue
                link = _find_filled(filled, value)
                if link is not None:
                    step.shared = dict(step.shared or {}, **{key: ("in",) + link})
            for key in step.fresh or ():
                filled.append((step.params[key], self.size))
                step.shared = dict(step.shared or {}, **{key: ("out", self.size, None)})
                self.size += 1

    def _compile(self, step, entry_mode, tensors):
        constant_arrays = _constant_arrays(step)
        fast = (step.kind == OP and len(step.outs) == 1 and step.outs[0] is not None and
                step.param_refs is None and step.fresh is None and step.rename is None and
                step.shared is None and
                (step.arrays is None or constant_arrays is not None) and
                step.grad_enabled == entry_mode and _plain(step.args))
        if not fast:
            return (None, step, None, None, None)
        indices = []
        for k, a in enumerate(step.args):
            if a.__class__ is not Slot:    # a plain value: a slot of its own
                self.constants.append((self.size, a if constant_arrays is None
                                       else constant_arrays[k]))
                a = Slot(self.size)
                self.size += 1
            indices.append(a.index)
        # The result's dtype as the capture saw it, when the caller left it to the door: the
        # door then wraps the array directly instead of looking its dtype up (the same dtype:
        # the guards fix the inputs' dtypes).
        out = step.outs[0].index
        dtype = step.dtype if step.dtype is not None else tensors[out].dtype
        return (step.fn, tuple(indices), step.params, dtype, out)

    def ops(self):
        return [step for step in self.steps if step.kind == OP]

    def replay(self, tensors):
        values = [None] * self.size
        for slot, position in self.inputs:
            values[slot] = tensors[position]
        for slot, value in self.constants:
            values[slot] = value
        dispatch = registry.dispatch
        # NOTE: a replay makes no cyclic garbage of its own but many small objects while
        # the graph it builds is alive: the cyclic collector's passes would traverse that
        # graph again and again (about a fifth of a small-op training step, measured), so
        # they wait until the replay ends.
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        entry_mode = grad_state.enabled
        if self.mode is not None:
            grad_state.enabled = self.mode
        try:
            if dispatch is registry.python_dispatch:
                for op, indices, params, dtype, out, dead in self.code:
                    if op is not None:
                        values[out] = dispatch(op, [values[i] for i in indices], params,
                                               dtype)
                    else:
                        (params or _run)(indices, values)
                    for i in dead:
                        values[i] = None
            else:   # the same loop, compiled with the door (backends/csrc/dispatch.c)
                cpu_kernels.compiled.replay(self.code, values, _run)
            for slot, node_class, op, nr, meta in self.freed_outputs or ():
                _attach_freed_node(values[slot], node_class, op, nr, meta)
            return _fill(self.output, values)
        finally:
            grad_state.enabled = entry_mode
            if collecting:
                gc.enable()


def _find_filled(filled, value):
    """(slot, None) when `value` is one of the `filled` lists or dicts, (slot, key) when it
    is an item of one, else None."""
    for container, slot in filled:
        if value is container:
            return (slot, None)
        keys = container.keys() if type(container) is dict else range(len(container))
        for k in keys:
            if container[k] is value:
                return (slot, k)
    return None


def _freed_outputs(recorder, output):
    """When every backward of the record was recorded as steps (capture.py) and no call
    under grad mode could have touched the graph, the forward's graph only ever served
    those backwards: the replay runs every op without recording one. What the caller can
    still see of it are the returned tensors with a graph node, whose graph that backward
    freed: (slot, node class, op, output_nr, (in_meta, out_meta)) of each, to give the replayed
    output an equal freed node (`backward()` through it raises eager's error; its
    next_functions are empty). None when the program must record graphs: a returned
    tensor's graph holds no freed node (a second backward would run in eager). Second: the
    reasons the replay records graphs (for explain)."""
    if not recorder.backwards or recorder.engine_reasons:
        return None, recorder.engine_reasons
    freed = []
    for index in _slots_in(output):
        t = recorder.tensors[index]
        fn = t.grad_fn
        if recorder.kinds[index] is None and fn is not None:
            if not any(getattr(node, "freed", False) for node in topological_order([fn])):
                return None, ["a returned tensor's graph can be differentiated again"]
            freed.append((index, type(fn), fn.op, t._output_nr, (fn.in_meta, fn.out_meta)))
    return freed, []


def _attach_freed_node(t, node_class, op, nr, meta):
    node = node_class(op, None, None, (), meta[0])
    node.out_meta = meta[1]
    node.free()
    t._requires_grad = True
    t.grad_fn = node
    t._output_nr = nr


# References on a gradient when _accumulate_last_use asks: the replay's list, its local,
# unshared's parameter and getrefcount's argument.
_REPLAY_REFS = 4


def _with_runner(entry, dead, lowered):
    """A code entry off the fast path with the function that runs it (None: _run): a
    gradient accumulation that is its gradient's last reader, in a program without graphs,
    may keep that gradient as `.grad` (_accumulate_last_use)."""
    step = entry[1]
    if entry[0] is None and lowered and step.kind == CALL and \
            step.fn is backward_steps.accumulate_grad and step.args[1].index in dead:
        return (None, step, _accumulate_last_use) + entry[3:]
    return entry


def _accumulate_last_use(step, values):
    """accumulate_grad, when no later step reads the gradient: a leaf without `.grad`,
    hooks or sparse layouts keeps it when nothing else holds it or its buffer (what the
    engine's AccumulateGrad does in eager, where the engine holds it last; replayed, the
    replay's list does); otherwise the accumulation as eager runs it."""
    leaf, grad = values[step.args[0].index], values[step.args[1].index]
    acc = leaf._accumulator
    if leaf._grad is None and grad.layout is _STRIDED and not debug_state.enabled and \
            (acc is None or not (acc.post_hooks or acc.hooks)) and \
            unshared(grad, _REPLAY_REFS, 3):
        leaf._grad = grad
        if step.outs[0] is not None:
            values[step.outs[0].index] = grad
        return
    _run(step, values)


def _run(step, values):
    """One step off the fast path (see Program)."""
    dispatch = registry.dispatch
    entry = grad_state.enabled
    grad_state.enabled = step.grad_enabled
    try:
        args = _fill(step.args, values)
        if step.kind == OP:
            params = step.params
            if step.param_refs or step.fresh or step.shared:
                params = dict(params)
                for key, (slot, how) in (step.param_refs or {}).items():
                    data = values[slot.index]._data
                    params[key] = data if how is None else \
                        data.reshape(how[1]).astype(how[0], copy=False)
                for key, value in (step.fresh or {}).items():
                    params[key] = value.copy()
                for key, (way, slot, item) in (step.shared or {}).items():
                    if way == "out":
                        values[slot] = params[key]
                    else:
                        params[key] = values[slot] if item is None else values[slot][item]
            arrays = None if step.arrays is None else _arrays(step.arrays, args)
            result = dispatch(step.fn, args, params, step.dtype, arrays)
            if step.rename is not None and result.__class__ is not tuple:
                registry.name_node(result, step.rename)
        elif step.kind == CALL:
            result = step.fn(*args, **_fill(step.params, values))
        else:
            setattr(args[0], step.fn, args[1])
            return
    finally:
        grad_state.enabled = entry
    outs = step.outs
    if len(outs) == 1:
        if outs[0] is not None:
            values[outs[0].index] = result
    else:
        for slot, r in zip(outs, result):
            if slot is not None:
                values[slot.index] = r
