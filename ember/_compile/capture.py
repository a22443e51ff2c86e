"""ember.compile's capture: one eager run of a callable, recorded as a program to replay.

What is recorded, in order:
- every call through the op registry's door (`dispatch`): op, inputs, params, result dtype
  and the grad mode it ran under. Replayed, it goes through the door again, so autograd
  records the same graph eager records and `backward()` runs eager's engine;
- every call of an entry point that changes state or makes a tensor out of nothing, as one
  "call" step: in-place Tensor methods, tensor factories (`zeros`, `randn`, `empty_like`...),
  `detach`, optimizers' `step`/`zero_grad`, BatchNorm's running statistics, a module call
  that runs hooks (so the hooks run again on replay); the list is entry_points.py's. The door
  calls inside such a call are not recorded: replaying the call makes them again;
- `backward()`, as the steps of what the engine does (backward_steps.py), or else as one
  call.

The record is only replayed when it is provably the whole story. The capture refuses it when:
- a tensor reaches a recorded call that was neither an input, a parameter or buffer of a
  module in reach, a tensor the function can see (globals, closure, module attributes), nor
  made by a recorded call (some code made it without passing the door);
- a version counter moved by more than the recorded calls account for (a write the record
  would not repeat);
- the default generator advanced outside the recorded calls (random numbers it would not
  draw again), or autocast changed inside the function;
- a graph break happened: a tensor's value left the tensor world (`item`, `tolist`, `bool`,
  `numpy`, printing), the function printed, or an op whose result shape depends on values
  ran (`nonzero`, boolean masks). The value could steer the Python that follows, which a
  replay does not run.
A refused record leaves the function running eagerly for that input signature, with the
reasons kept for `ember._dynamo.explain`.
"""
import threading
import traceback

import numpy as np

from .. import _random, _value_checks
from .._tensor import Tensor
from ..autograd.grad_mode import state as grad_state
from ..ops import registry
from . import backward_steps, entry_points
from .entry_points import DATA_DEPENDENT
from .guards import autocast_state

OP, CALL, SETATTR = "op", "call", "setattr"



active = None   # the Recorder of the capture running now (for ember._dynamo.graph_break)


class Break:
    """One graph break: why, and where in the user's code (frames outside ember)."""

    def __init__(self, reason, user_stack):
        self.reason = reason
        self.user_stack = user_stack


class Step:
    """One recorded call. `kind` OP: `fn` is the Op, `args` its inputs, `params`, `dtype`;
    CALL: `fn` the entry point, `args`/`params` its positional and keyword arguments;
    SETATTR: `fn` the attribute name, `args` (target, value). Tensors inside `args` and
    `params` are `Slot`s; `outs` are the slots the results fill (None for a non-tensor)."""

    __slots__ = ("kind", "fn", "args", "params", "dtype", "outs", "grad_enabled", "rename",
                 "param_refs", "segment", "arrays", "fresh", "draws", "shared")

    def __init__(self, kind, fn, args, params, dtype, outs, grad_enabled, segment):
        self.kind, self.fn, self.args, self.params, self.dtype = kind, fn, args, params, dtype
        self.outs, self.grad_enabled, self.segment = outs, grad_enabled, segment
        self.rename = None
        self.param_refs = None   # {param name: (Slot, how)} for params made from a tensor's
        #                          array (Recorder.array_source)
        self.arrays = None       # how `arrays=` followed from the inputs (array_recipe)
        self.fresh = None        # {param name: the value to copy afresh for each replay}
        self.draws = True        # the call drew random numbers (an op step: measured)
        self.shared = None       # {param name: ("out" | "in", slot)} (Program._link_fresh)

    @property
    def name(self):
        if self.kind == OP:
            return self.fn.name
        if self.kind == SETATTR:
            return f"setattr {self.fn}"
        return getattr(self.fn, "__qualname__", None) or getattr(self.fn, "__name__", "?")


class Slot:
    """A tensor of the program: the replay's `values[index]`."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"%{self.index}"


def user_stack():
    """The caller's frames outside ember (where the user's code stood)."""
    frames = traceback.extract_stack()[:-2]
    return [f for f in frames if "/ember/" not in f.filename.replace("\\", "/")]


class Recorder:
    """The state of one capture: install() it, run the function, uninstall()."""

    def __init__(self, sources, fullgraph, roots=()):
        self.sources = sources          # id(tensor) -> how to find it again (guards.py)
        self.roots = roots              # the modules whose state the guards check
        self.fullgraph = fullgraph
        self.steps = []
        self.slots = {}                 # id(tensor) -> Slot
        self.tensors = []               # slot index -> tensor (keeps ids unique meanwhile)
        self.kinds = []                 # slot index -> ("input", i) / ("const", source) / None
        self.breaks = []
        self.refusals = []              # reasons the record cannot be replayed
        self.depth = 0                  # > 0 inside a recorded call
        self.thread = threading.get_ident()
        self.explained = {}             # id(version counter) -> bumps made by recorded calls
        self.counters = {}              # id(version counter) -> (counter, version first seen)
        self.autocast_at_entry = autocast_state()
        self.grad_enabled_at_entry = grad_state.enabled
        self.rng = None
        self.patches = []
        self.lowering = False           # True while a backward is recorded as its steps
        self.aliases = []               # tensors sharing a slot with another (slot_of)
        self.backwards = 0              # backward calls recorded as steps
        self.engine_reasons = []        # why the replay must record graphs and run the
        #                                 engine (a backward as one call, a call under grad
        #                                 mode that may use or change the graph)
        self.lowerable_calls = {backward_steps.accumulate_grad,   # (+ patch_calls)
                                backward_steps.missing_gradient,
                                Tensor.__dict__["detach"]}

    # ------------------------------------------------------------------ tensors and slots
    def bind(self, t, kind=None):
        slot = Slot(len(self.tensors))
        self.slots[id(t)] = slot
        self.tensors.append(t)
        self.kinds.append(kind)
        vc = t._vc
        if id(vc) not in self.counters:
            self.counters[id(vc)] = (vc, vc.v)
        return slot

    def slot_of(self, t):
        slot = self.slots.get(id(t))
        if slot is not None:
            return slot
        source = self.sources.get(id(t))
        if source is None and self.lowering:
            # (a node's saved output, which a VJP reads as a new Tensor over the array of
            # the forward's result: that result's slot)
            for known in self.tensors:
                if known._data is t._data and known.dtype is t.dtype:
                    slot = self.slots[id(t)] = self.slots[id(known)]
                    self.aliases.append(t)   # (its id stays its own while the capture runs)
                    return slot
        if source is None:
            self.refuse(f"a tensor of shape {list(t.shape)} reached {self.current} made "
                        "outside the recorded calls")
            return self.bind(t, ("const", None))
        return self.bind(t, ("const", source))

    def template(self, obj):
        """`obj` with every tensor replaced by its Slot (inside lists, tuples and dicts)."""
        if isinstance(obj, Tensor):
            return self.slot_of(obj)
        if type(obj) in (list, tuple):
            return type(obj)(self.template(o) for o in obj)
        if type(obj) is dict:
            return {k: self.template(v) for k, v in obj.items()}
        return obj

    def results(self, result):
        """Slots for a call's results: a tensor already known keeps its slot (an in-place
        method returns its target), a new one gets a new slot."""
        items = result if type(result) in (tuple, list) else (result,)
        outs = []
        for r in items:
            if isinstance(r, Tensor):
                slot = self.slots.get(id(r))
                outs.append(slot if slot is not None else self.bind(r))
            else:
                outs.append(None)
        return outs

    def mark(self):
        """What `rollback` returns to: the record as it stands."""
        return (len(self.steps), len(self.tensors), len(self.aliases), len(self.breaks),
                dict(self.explained), dict(self.counters))

    def rollback(self, mark):
        """Drop what was recorded since `mark` (steps, slots, breaks, version accounts)."""
        steps, tensors, aliases, breaks, self.explained, self.counters = mark
        for t in self.tensors[tensors:] + self.aliases[aliases:]:
            del self.slots[id(t)]
        del self.steps[steps:], self.tensors[tensors:], self.kinds[tensors:]
        del self.aliases[aliases:], self.breaks[breaks:]

    def refuse(self, reason):
        if reason not in self.refusals:
            self.refusals.append(reason)

    def graph_break(self, reason):
        from .._dynamo import exc   # (deferred: `import ember` skips ember._dynamo)
        if self.fullgraph:
            raise exc.Unsupported(reason)
        self.breaks.append(Break(reason, user_stack()))

    # ------------------------------------------------------------------ what is recorded
    def _rng_state(self):
        return _random.default_generator.get_state()._data.tobytes()

    def check_rng(self):
        """Before a recorded call: the generator must not have moved since the last one."""
        if self.rng is not None and self._rng_state() != self.rng:
            self.refuse("random numbers were drawn outside the recorded calls")

    def mark_rng(self):
        """After a recorded call (which may draw: replaying it draws again)."""
        self.rng = self._rng_state()

    def passing(self):
        """True when the call now at the door is not the function's own: inside a recorded
        call, or on another thread (a data loader's)."""
        return self.depth or threading.get_ident() != self.thread

    def op(self, op, inputs, params, dtype, arrays):
        """The registry's door during a capture (installed as `registry.profiler`)."""
        passing = self.passing()
        if not passing:
            self.current = op.name
            self.check_rng()
        containers = {k: v.copy() for k, v in params.items() if type(v) in (list, dict)}
        registry.profiler = None
        try:
            result = registry.python_dispatch(op, inputs, params, dtype, arrays)
        finally:
            registry.profiler = self
        if passing:
            return result
        if op.name in DATA_DEPENDENT or op.name == "index" and _has_mask(params["key"]):
            self.graph_break(f"dynamic shape operator: {op.name}")
        if autocast_state() != self.autocast_at_entry:
            self.refuse("autocast changed inside the compiled function")
        step = Step(OP, op, [self.template(x) for x in inputs], params, dtype, None,
                    grad_state.enabled, len(self.breaks))
        if arrays is not None:
            step.arrays = self.array_recipe(op, inputs, arrays)
        refs = {}
        for key, value in params.items():
            if _is_array(value):
                ref = self.array_source(value)
                if ref is not None:
                    refs[key] = ref
                    continue
            elif not _nested_any(value, _is_array) or self.filled_before(value):
                continue
            if self.lowering:
                # (arrays a VJP computed or took from its node: a replay would reuse them)
                self.refuse(f"{op.name} in backward took arrays that are not a tensor's")
        step.param_refs = refs or None
        # A list or dict param the forward filled (max_pool's `saved` indices, read by its
        # VJP) is state of this call: each replay starts from a fresh copy of its old value.
        fresh = {k: v for k, v in containers.items() if _changed(v, params[k])}
        step.fresh = fresh or None
        step.outs = self.results(result)
        self.steps.append(step)
        before = self.rng
        self.mark_rng()
        step.draws = self.rng != before
        return result

    def array_recipe(self, op, inputs, arrays):
        """How the arrays a caller handed the door (`arrays=`) follow from the inputs: per
        input, None (its own array), a NumPy dtype (its array cast) or ("array", a) (a
        constant); anything else refuses the record."""
        recipe = []
        for x, a in zip(inputs, arrays):
            if not isinstance(x, Tensor):
                recipe.append(("array", a))
            elif a is x._data:
                recipe.append(None)
            elif getattr(a, "shape", None) == x._data.shape and \
                    np.array_equal(a, x._data.astype(a.dtype), equal_nan=True):
                recipe.append(a.dtype)
            else:
                self.refuse(f"{op.name} was given arrays other than its inputs' own")
                return None
        return None if all(how is None for how in recipe) else recipe

    def array_source(self, value):
        """(slot, None) when an array param is a tensor's own array, (slot, (dtype, shape))
        when it is that array reshaped or cast (an index flattened to int64), else None:
        how the replay makes the param from the new values."""
        for t in self.tensors:
            if t._data is value:
                return (self.slots[id(t)], None)
        for m in self.roots:   # (a buffer's array, such as a causal mask, read as a param)
            for t in list(m.parameters()) + list(m.buffers()):
                if t._data is value:
                    return (self.slot_of(t), None)
        for t in self.tensors:
            data = t._data
            if data.size == value.size and data.__class__ is value.__class__:
                derived = data.reshape(value.shape).astype(value.dtype, copy=False)
                if np.array_equal(derived, value, equal_nan=True):
                    return (self.slots[id(t)], (value.dtype, value.shape))
        return None

    def filled_before(self, value):
        """Whether `value` is (an item of) a list or dict an earlier op step filled (its
        `fresh` param): the replay hands the reader that step's new copy (Program)."""
        for step in self.steps:
            for key in step.fresh or ():
                filled = step.params[key]
                items = filled.values() if type(filled) is dict else filled
                if value is filled or any(value is item for item in items):
                    return True
        return False

    def call(self, fn, args, kwargs):
        """A recorded entry point: run it, then record it as one step."""
        if self.passing():
            return fn(*args, **kwargs)
        if fn is backward_steps.BACKWARD and not self.lowering:
            why = backward_steps.engine_reason(*args, **kwargs)
            if why is None:
                return backward_steps.record(self, fn, args, kwargs)
            self.engine_reasons.append(why)
        self.current = getattr(fn, "__name__", "a call")
        self.check_rng()
        args_t, kwargs_t = self.template(args), self.template(kwargs)
        before = self.versions()
        enabled = grad_state.enabled
        self.depth += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        self.account(before)
        self.add_call(fn, args_t, kwargs_t, enabled, result)
        if enabled and fn not in self.lowerable_calls and \
                fn is not backward_steps.BACKWARD and \
                _nested_any((args, kwargs, result), _requires_grad):
            self.engine_reasons.append(f"{self.current} under grad mode on a tensor that "
                                       "requires grad")
        return result

    def versions(self):
        return {key: vc.v for key, (vc, _) in self.counters.items()}

    def account(self, before):
        """The version bumps since `before` are the recorded call's (it makes them again)."""
        for key, v in before.items():
            moved = self.counters[key][0].v - v
            if moved:
                self.explained[key] = self.explained.get(key, 0) + moved

    def add_call(self, fn, args_t, kwargs_t, enabled, result):
        step = Step(CALL, fn, args_t, kwargs_t, None, None, enabled, len(self.breaks))
        step.outs = self.results(result)
        self.steps.append(step)
        self.mark_rng()

    def unrecorded(self, fn, args, kwargs):
        """Run `fn` without recording it (see ember/_value_checks.py)."""
        self.depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            self.depth -= 1

    def setattr(self, prop, name, target, value):
        if self.passing():
            prop.fset(target, value)
            return
        self.current = name
        if name == "requires_grad":
            self.engine_reasons.append("requires_grad set inside the function")
        step = Step(SETATTR, name, (self.template(target), self.template(value)), None, None,
                    [], grad_state.enabled, len(self.breaks))
        prop.fset(target, value)
        self.steps.append(step)

    # ------------------------------------------------------------------ installing
    def install(self):
        global active
        active = self
        _value_checks.suspend = self.unrecorded
        self.mark_rng()
        registry.profiler = self
        registry.instruments.append(_hand_to_python_door)
        entry_points.patch_calls(self)
        entry_points.patch_breaks(self)

    def uninstall(self):
        global active
        active = None
        _value_checks.suspend = None
        for owner, name, original in reversed(self.patches):
            setattr(owner, name, original)
        self.patches.clear()
        registry.instruments.remove(_hand_to_python_door)
        registry.profiler = None

    def patch(self, owner, name, replacement):
        self.patches.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, replacement)

    def recorded(self, fn):
        def recorded(*args, **kwargs):
            return self.call(fn, args, kwargs)
        recorded.__name__ = getattr(fn, "__name__", "recorded")
        return recorded

    # ------------------------------------------------------------------ after the run
    def finish(self, output):
        """Check what the record must explain (see the module docstring)."""
        self.check_rng()
        for key, (vc, first) in self.counters.items():
            if vc.v - first != self.explained.get(key, 0):
                self.refuse("a tensor was written in place outside the recorded calls")
                break
        for step in self.steps:
            if step.kind == OP and step.outs and step.outs[0] is not None:
                fn = self.tensors[step.outs[0].index].grad_fn
                if fn is not None and type(fn) is not step.fn.node_class:
                    step.rename = type(fn).__name__
        self.current = "the output"
        return self.template(output)


def _hand_to_python_door(op, inputs, params, result):
    """An instrument that does nothing: its presence sends every call through the Python
    door, which hands it to the capture (`registry.profiler`)."""


def _changed(before, after):
    if len(before) != len(after):
        return True
    pairs = zip(before, after) if type(before) is list else \
        ((before[k], after.get(k, before)) for k in before)
    return any(a is not b for a, b in pairs)


def _has_mask(key):
    """An indexing key holding a boolean array (its result's shape depends on values)."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(getattr(getattr(p, "dtype", None), "kind", None) == "b" for p in parts)


def _nested_any(obj, test):
    """Whether `test` holds for an item of `obj`, at any depth of its lists, tuples and dicts
    (or for `obj` itself when it is none of them)."""
    if type(obj) in (list, tuple):
        return any(_nested_any(o, test) for o in obj)
    if type(obj) is dict:
        return any(_nested_any(o, test) for o in obj.values())
    return test(obj)


def _requires_grad(t):
    return isinstance(t, Tensor) and t._requires_grad


def _is_array(value):
    return hasattr(value, "__array_interface__") or hasattr(value, "__cuda_array_interface__")
