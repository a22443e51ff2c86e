"""One overload of PyTorch's argument parser: its parameters, what each accepts, and the
messages PyTorch gives when a call does not fit it.

A signature is the text PyTorch prints ("Tensor input, int dim, *, bool keepdim = False"),
with `?` after the type of a parameter that accepts None, and `*int size` for the varargs
form (zeros(2, 3) as well as zeros((2, 3))). What each type accepts was learnt from torch 2.13
by calling it: an `int` takes Python and NumPy integers and 0-d integer tensors but not bool,
a `bool` takes only Python's bool, a `float` any real number (and NumPy's complex, read
through float()), a `Number` any number or 0-d tensor."""
import builtins

import numpy as np

from .._device import device
from .._dtype import BOOL, FLOATING, INTEGER, dtype
from .._scalars import type_name

_NUMPY_INT = np.integer
_NUMPY_NUMBER = (np.number, np.bool_)


def _tensor_class():
    from .._tensor import Tensor   # (cycle: ember._tensor imports this package while it loads)
    return Tensor


Tensor = None   # bound on first use (this module is imported by the Tensor's own package)


def _is_tensor(v):
    return isinstance(v, Tensor)


def _is_int(v):
    cls = v.__class__
    if cls is int:
        return True
    if cls is builtins.bool:
        return False
    if isinstance(v, (int, _NUMPY_INT)):
        return True
    return isinstance(v, Tensor) and v.ndim == 0 and v.dtype.category == INTEGER


def _is_sym_int(v):
    """A SymInt parameter also takes a one-element tensor of any non-floating dtype (through
    __index__; torch 2.13 lets a bool tensor through to an internal assert)."""
    return _is_int(v) or _is_index_tensor(v)


def _is_float(v):
    if isinstance(v, (int, builtins.float, _NUMPY_NUMBER)):   # bool is an int
        return True
    return _is_scalar_tensor(v)


def _is_number(v):
    if isinstance(v, (int, builtins.float, builtins.complex, _NUMPY_NUMBER)):
        return True
    return _is_scalar_tensor(v)


def _is_scalar_tensor(v):
    """A tensor PyTorch's parser reads as a number: 0-d, and not requiring grad."""
    return isinstance(v, Tensor) and v.ndim == 0 and not v.requires_grad


def _is_bool(v):
    return v.__class__ is builtins.bool


def _is_size(v):
    if not isinstance(v, (list, tuple)):
        return False
    return all(_size_element(i, e) for i, e in enumerate(v))


def _is_index_tensor(v):
    """A tensor PyTorch reads as one int (through __index__): one element, not floating."""
    return isinstance(v, Tensor) and v.numel() == 1 and v.dtype.category < FLOATING


def _size_element(i, e):
    """Whether PyTorch's parser takes `e` at position `i` of an int list.

    NOTE: the first element is checked with the types (an int, not a bool); the others only
    while converting, through __index__, which bools pass. Either may be a one-element
    tensor of an integer or bool dtype."""
    if i == 0:
        return _is_int(e) or _is_index_tensor(e)
    return isinstance(e, (int, _NUMPY_INT)) or _is_index_tensor(e)


def _check_sym_ints(value):
    """PyTorch's conversion of a SymInt list that passed the parser, element by element: a
    bool tensor fails an internal check (a RuntimeError) unless an earlier element already
    failed to convert (the parser's TypeError)."""
    items = value if isinstance(value, (list, tuple)) else (value,)
    for i, e in enumerate(items):
        if e.__class__ is int:
            continue
        if not _size_element(i, e):
            return   # (converting stops there, with the parser's TypeError)
        if isinstance(e, Tensor) and e.dtype.category == BOOL:
            raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")


def _is_int_or_size(v):
    """NOTE: an int list of a fixed size (kernel_size, stride) takes one int for all its
    entries, or a one-element tensor of an integer or bool dtype (read through __index__)."""
    return _is_sym_int(v) or _is_size(v)


def _is_floats(v):
    return isinstance(v, (list, tuple)) and all(_is_float(e) for e in v)


def _is_scalars(v):
    return isinstance(v, (list, tuple)) and all(_is_number(e) for e in v)


def _is_tensors(v):
    return isinstance(v, (list, tuple)) and all(isinstance(e, Tensor) for e in v)


def _is_tensor_or_tensors(v):
    return isinstance(v, Tensor) or _is_tensors(v)


def _is_tensors_or_none(v):
    return isinstance(v, (list, tuple)) and all(e is None or isinstance(e, Tensor) for e in v)


def _is_tensor_or_number(v):
    return isinstance(v, Tensor) or _is_number(v)


def _is_tensor_or_int(v):
    return isinstance(v, Tensor) or _is_int(v)


def _is_dtype(v):
    return isinstance(v, dtype)


def _is_device(v):
    # (an int is a device index; a tensor is not, not even a 0-d integer one)
    return isinstance(v, (device, str)) or (_is_int(v) and not isinstance(v, Tensor))


def _named(type_name_):
    return lambda v: type(v).__name__ == type_name_


def _anything(v):
    return True


# type in a signature -> (what it accepts, how PyTorch's messages name it)
KINDS = {
    "Tensor": (_is_tensor, "Tensor"),
    "Tensor or Number": (_is_tensor_or_number, "Tensor"),
    "Tensor or int": (_is_tensor_or_int, "Tensor"),
    "Number": (_is_number, "Number"),
    "int": (_is_int, "int"),
    "SymInt": (_is_sym_int, "int"),
    "float": (_is_float, "float"),
    "bool": (_is_bool, "bool"),
    "str": (lambda v: isinstance(v, str), "str"),
    "tuple of ints": (_is_size, "tuple of ints"),
    "tuple of SymInts": (_is_size, "tuple of ints"),
    "int or tuple of ints": (_is_int_or_size, "tuple of ints"),
    "tuple of floats": (_is_floats, "tuple of floats"),
    "tuple of Scalars": (_is_scalars, "tuple of Scalars"),
    "tuple of Tensors": (_is_tensors, "tuple of Tensors"),
    "tuple of Tensors or Tensor": (_is_tensor_or_tensors, "tuple of Tensors"),
    "tuple of optional Tensors": (_is_tensors_or_none, "tuple of Tensors"),
    "torch.dtype": (_is_dtype, "torch.dtype"),
    "torch.device": (_is_device, "torch.device"),
    "torch.layout": (_named("layout"), "torch.layout"),
    "torch.memory_format": (_named("memory_format"), "torch.memory_format"),
    "torch.Generator": (_named("Generator"), "torch.Generator"),
    "object": (_anything, "object"),
    "None": (lambda v: False, "None"),   # (size(dim: None = None): the no-argument form)
}


# Classes whose every value a kind accepts: the fast path tests membership, not values.
_ALWAYS = {
    "Tensor": ("Tensor",), "Tensor or Number": ("Tensor", int, builtins.float, builtins.bool),
    "Tensor or int": ("Tensor", int), "Number": (int, builtins.float, builtins.bool),
    "int": (int,), "SymInt": (int,), "float": (builtins.float, int, builtins.bool),
    "bool": (builtins.bool,),
    "str": (str,), "int or tuple of ints": (int,),
}


class Param:
    __slots__ = ("name", "kind", "accepts", "printed_type", "nullable", "default", "required",
                 "keyword_only", "index", "always")

    def __init__(self, text, keyword_only, index):
        decl, _, default = text.partition(" = ")
        kind, _, self.name = decl.rpartition(" ")
        # NOTE: an int list with a fixed size and an empty default (int[1] dim=[]: sum, amax)
        # takes None too; one with another default (fft2's dim=[-2,-1]) or none does not.
        self.nullable = kind.endswith("?") or default == "None" or \
            kind == "int or tuple of ints" and default in ("()", "{}", "[]")
        self.kind = kind.rstrip("?")
        self.accepts, self.printed_type = KINDS.get(self.kind, KINDS["object"])
        self.default = default or None
        self.required = not default
        self.keyword_only = keyword_only
        self.index = index
        always = {Tensor if c == "Tensor" else c for c in _ALWAYS.get(self.kind, ())}
        if self.nullable:
            always.add(type(None))
        self.always = frozenset(always)

    def ok(self, value):
        if value.__class__ in self.always:
            return True
        if value is None:
            return self.nullable
        return self.accepts(value)

    def ok_at_first(self, value):
        """`ok` as PyTorch's overload matching sees it: of an int list only the first element
        is looked at (the rest fail later, while converting, with "failed to unpack")."""
        if self.kind in _INT_LISTS and isinstance(value, (list, tuple)) and value:
            return _is_sym_int(value[0])
        return self.ok(value)

    @property
    def printed(self):
        return f"{self.printed_type} {self.name}" + (f" = {self.default}" if self.default
                                                       else "")


_INT_LISTS = ("tuple of ints", "tuple of SymInts", "int or tuple of ints")


class Signature:
    """One overload: `accepts(args, kwargs)` and PyTorch's message when it does not."""

    __slots__ = ("params", "positional", "by_name", "printed", "int_varargs", "required",
                 "deprecated", "keyword_positions", "sym_ints")

    def __init__(self, text, keyword_positions=False):
        self.keyword_positions = keyword_positions
        global Tensor
        if Tensor is None:
            Tensor = _tensor_class()
        self.deprecated = text.startswith("!")
        text = text.lstrip("!")
        self.params, keyword_only = [], False
        for part in _split(text):
            if part == "*":
                keyword_only = True
                continue
            self.params.append(Param(part, keyword_only, len(self.params)))
        self.positional = [p for p in self.params if not p.keyword_only]
        self.by_name = {p.name: p for p in self.params}
        self.required = [p for p in self.params if p.required]
        # NOTE: PyTorch's parser lets a lone int-list parameter take its ints as varargs
        # (x.view(2, 3), zeros(2, 3), x.flip(0)), but not one among others (flip(x, 0)),
        # nor after a first list (zeros((2,), 3) has too many positional arguments), nor a
        # list of a fixed size (x.std(0, 1): int[1] dim).
        self.int_varargs = len(self.positional) == 1 and \
            self.positional[0].kind in ("tuple of ints", "tuple of SymInts")
        self.printed = ", ".join(_printed_part(p, i, self.params)
                                 for i, p in enumerate(self.params))
        self.sym_ints = [p for p in self.params if p.kind in ("tuple of SymInts", "SymInt")]

    def accepts(self, args, kwargs):
        """0 when the call does not fit this overload, 1 when it fits, 2 when it fits by the
        classes of its arguments alone (so any call with the same classes fits too)."""
        n = len(args)
        positional = self.positional
        by_class = 2
        if n > len(positional) or (n == 1 and self.int_varargs):
            if not self.int_varargs:
                return 0
            if not isinstance(args[0], (list, tuple)):
                args = (args,)
            elif n > 1:
                return 0
            n, by_class = 1, 1
        for p, v in zip(positional, args):
            if v.__class__ not in p.always:
                if not p.ok(v):
                    return 0
                by_class = 1
        if kwargs:
            by_name = self.by_name
            for key, v in kwargs.items():
                p = by_name.get(key)
                if p is None or p.index < n:
                    return 0
                if v.__class__ not in p.always:
                    if not p.ok(v):
                        return 0
                    by_class = 1
        for p in self.required:
            if p.index >= n and p.name not in kwargs:
                return 0
        return by_class

    def convert(self, args, kwargs):
        """The checks of PyTorch's argument conversion, which follows the overload's match:
        only its SymInts and SymInt lists have one (no bool tensors)."""
        if self.int_varargs and args and not isinstance(args[0], (list, tuple)):
            args = (args,)
        for p in self.sym_ints:
            value = args[p.index] if p.index < len(args) else kwargs.get(p.name)
            if value is None:
                continue
            if p.kind == "tuple of SymInts":
                _check_sym_ints(value)
            elif isinstance(value, Tensor) and value.dtype.category == BOOL:
                raise RuntimeError('scalar.isIntegral( false) INTERNAL ASSERT FAILED at "/__w/'
                                   'pytorch/pytorch/torch/csrc/utils/pybind.cpp":27, please '
                                   'report a bug to PyTorch. ')

    def _bind(self, args, kwargs):
        """[(param, value, position or None)] or a string saying why the call cannot bind."""
        n = len(args)
        if n > len(self.positional) or (n == 1 and self.int_varargs):
            if not self.int_varargs:
                return "arity"
            if not isinstance(args[0], (list, tuple)):
                args = (_Packed(args),)
            elif n > 1:
                return "arity"
        bound = [(p, v, i + 1) for i, (p, v) in enumerate(zip(self.positional, args))]
        names = {p.name for p in self.positional[:len(args)]}
        for key, value in kwargs.items():
            param = self.by_name.get(key)
            if param is None:
                return "keyword"
            if key in names:
                return "duplicate"
            names.add(key)
            bound.append((param, value, None))
        for p in self.required:
            if p.name not in names:
                return "missing"
        return bound

    def by_keyword(self, args, kwargs):
        """The call's arguments by parameter name (to call a deprecated overload's modern
        form: add(x, 2, y) -> add(x, other=y, alpha=2))."""
        named = {p.name: v for p, v in zip(self.positional, args)}
        named.update(kwargs)
        return named

    def matches_at_first(self, args, kwargs):
        """Whether PyTorch's overload matching picks this overload for the call (see
        Param.ok_at_first)."""
        bound = self._bind(args, kwargs)
        return bound.__class__ is not str and all(p.ok_at_first(v) for p, v, _ in bound)

    def fits_shape(self, args, kwargs):
        """Whether the call has as many arguments as this overload takes: PyTorch's parser
        reports the one overload that does (counting positional and keyword arguments
        together), else lists them all."""
        n = len(args) + len(kwargs)
        return len(self.required) <= n <= len(self.params)

    # -- messages
    def failure(self, name, args, kwargs):
        """PyTorch's message for this one overload rejecting the call: too many positional
        arguments first, then the positional arguments' types, then the keywords, then
        what is missing (the order torch 2.13's parser reports them in)."""
        n = len(args)
        packs = self.int_varargs and n and not isinstance(args[0], (list, tuple))
        if n > len(self.positional) and not packs:
            return self._arity_message(name, n)
        if packs:
            args = (_Packed(args),)
        for i, (param, value) in enumerate(zip(self.positional, args)):
            if not param.ok(value):
                return self._type_message(name, param, value, i + 1)
        given = {p.name for p in self.positional[:len(args)]}
        for key, value in kwargs.items():
            param = self.by_name.get(key)
            if param is None:
                return f"{name}() got an unexpected keyword argument '{key}'"
            if key in given:
                return f"{name}() got multiple values for argument '{key}'"
            if not param.ok(value):
                # (a Python wrapper passes its keywords on as positional arguments)
                position = param.index + 1 if self.keyword_positions else None
                return self._type_message(name, param, value, position)
        missing = [p.name for p in self.required if p.name not in given and p.name not in kwargs]
        if missing:
            # NOTE: PyTorch's own grammar: "1 required positional arguments", "2 ...
            # argument".
            noun = "arguments" if len(missing) == 1 else "argument"
            names = ", ".join(f'"{m}"' for m in missing)
            return f"{name}() missing {len(missing)} required positional {noun}: {names}"
        return f"{name}(): invalid arguments"

    @staticmethod
    def _type_message(name, param, value, position):
        where = f" (position {position})" if position is not None else ""
        if param.kind in _INT_LISTS and isinstance(value, (list, tuple)) and value:
            # NOTE: PyTorch's parser checks a list's first element with the types, the rest
            # while converting: two messages.
            i, bad = next(((i, e) for i, e in enumerate(value) if not _size_element(i, e)),
                          (0, value[0]))
            if i:
                return (f"{name}(): argument '{param.name}' failed to unpack the object at "
                        f'pos {i + 1} with error "type must be tuple of ints,but got '
                        f'{type_name(bad)}"')
            if value.__class__ is not _Packed:
                return (f"{name}(): argument '{param.name}'{where} must be tuple of ints, but "
                        f"found element of type {type_name(bad)} at pos 0")
            value = bad   # x.expand(1.5): the lone value's type
        if param.kind.startswith("tuple of") and "Tensors" in param.kind and \
                isinstance(value, (list, tuple)):
            allow_none = param.kind == "tuple of optional Tensors"
            i, bad = next((i, e) for i, e in enumerate(value)
                          if not (isinstance(e, Tensor) or e is None and allow_none))
            return (f"expected Tensor as element {i} in argument {param.index}, but got "
                    f"{type_name(bad)}")
        return (f"{name}(): argument '{param.name}'{where} must be {param.printed_type}, not "
                f"{type_name(value)}")

    def _arity_message(self, name, given):
        most = len(self.positional)
        least = sum(1 for p in self.positional if p.required)
        count = f"{most}" if least == most else f"from {least} to {most}"
        noun = "argument" if most == 1 and least == most else "arguments"
        verb = "was" if given == 1 else "were"
        return f"{name}() takes {count} positional {noun} but {given} {verb} given"

    def mismatch_marks(self, args, kwargs):
        """PyTorch's "(Tensor, !str!)": the call's types, wrong ones between bangs; None when
        PyTorch prints no such line under this overload: when the call's argument count is
        not the overload's (counted as PyTorch's message formatter counts: every item of
        the printed signature, its "*" marker included, less an `out`), or when the call
        does not bind to it at all."""
        items = len(self.params) + any(p.keyword_only for p in self.params) - (
            "out" in self.by_name)
        if len(args) + len(kwargs) != items:
            return None
        bound = self._bind(args, kwargs)
        if bound.__class__ is str:
            return None
        parts = []
        for param, value, position in bound:
            shown = value[0] if value.__class__ is _Packed and len(value) == 1 else value
            text = type_name(shown)   # (a lone vararg is shown as itself: view(None))
            if not param.ok(value):
                text = f"!{text}!"
            parts.append(text if position is not None else f"{param.name}={text}")
        return "(" + ", ".join(parts) + (", )" if kwargs and not args else ")")


class _Packed(tuple):
    """The ints a lone int-list parameter took as varargs (x.view(2, 3))."""


def _printed_part(param, index, params):
    text = param.printed
    if param.keyword_only and (
            index == 0 or not params[index - 1].keyword_only):
        return "*, " + text
    return text


def _split(text):
    """The parameters of a signature's text: commas inside a default's brackets do not
    separate ("tuple of ints dims = (0, 1)")."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        parts.append(text[start:].strip())
    return parts


def describe_call(args, kwargs):
    """PyTorch's "(Tensor, int)" / "(Tensor, dim=str, )" for the call's argument types."""
    parts = [type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + (", )" if kwargs and not args else ")")
