"""A captured program and its replay: the recorded steps run one after another on the new
inputs, without the Python of the function that was compiled (its modules' `__call__`s,
functional wrappers and argument checks).

Each step runs as eager would run it: an op through the registry's door (so autograd records
eager's graph and `backward()` gives eager's gradients), a recorded call by calling the same
entry point, under the grad mode the capture saw. Results are therefore eager's, bit for bit.
"""
from ..autograd.grad_mode import state as grad_state
from ..ops import registry
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


def _plain(template):
    """True when a template holds no Slot below its top level (the replay's fast case)."""
    return all(t.__class__ not in (list, tuple, dict) for t in template)


class Program:
    """`steps` over `size` value slots; `inputs`: the slots of the flattened tensor
    arguments, in order; `constants`: (slot, tensor) pairs for tensors the function reads
    from outside (parameters, buffers, globals); `output`: the returned structure with
    Slots. `segments`/`breaks` feed `explain`."""

    def __init__(self, recorder, output):
        self.steps = recorder.steps
        self.size = len(recorder.tensors)
        self.inputs = [i for i, kind in enumerate(recorder.kinds)
                       if kind is not None and kind[0] == "input"]
        self.input_positions = [kind[1] for kind in recorder.kinds
                                if kind is not None and kind[0] == "input"]
        self.constants = [(i, recorder.tensors[i]) for i, kind in enumerate(recorder.kinds)
                          if kind is not None and kind[0] == "const"]
        self.output = output
        self.plain = [step.kind == OP and _plain(step.args) for step in self.steps]

    def ops(self):
        return [step for step in self.steps if step.kind == OP]

    def replay(self, tensors):
        values = [None] * self.size
        for slot, position in zip(self.inputs, self.input_positions):
            values[slot] = tensors[position]
        for slot, t in self.constants:
            values[slot] = t
        dispatch = registry.dispatch
        entry = grad_state.enabled
        try:
            for step, plain in zip(self.steps, self.plain):
                if step.grad_enabled is not grad_state.enabled:
                    grad_state.enabled = step.grad_enabled
                if plain:
                    args = [values[a.index] if a.__class__ is Slot else a for a in step.args]
                else:
                    args = _fill(step.args, values)
                if step.kind == OP:
                    params = step.params
                    if step.param_refs:
                        params = dict(params)
                        for key, slot in step.param_refs.items():
                            params[key] = values[slot.index]._data
                    arrays = None if step.arrays is None else _arrays(step.arrays, args)
                    result = dispatch(step.fn, args, params, step.dtype, arrays)
                    if step.rename is not None and result.__class__ is not tuple:
                        registry.name_node(result, step.rename)
                elif step.kind == CALL:
                    result = step.fn(*args, **_fill(step.params, values))
                else:
                    setattr(args[0], step.fn, args[1])
                    continue
                outs = step.outs
                if len(outs) == 1:
                    if outs[0] is not None:
                        values[outs[0].index] = result
                else:
                    for slot, r in zip(outs, result):
                        if slot is not None:
                            values[slot.index] = r
        finally:
            grad_state.enabled = entry
        return _fill(self.output, values)
