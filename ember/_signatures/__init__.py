"""PyTorch's argument parser: the argument types of a call checked before the op runs.

PyTorch's C functions and methods check every argument against their signatures first and
raise a TypeError naming the argument ("select(): argument 'dim' (position 2) must be int,
not str"), or listing the overloads; only then does the op see its values. ember's functions
check a value where they use it, so a wrongly typed argument used to fail later, with another
exception, or not at all. `install` puts one checker in front of every public function and
method whose torch counterpart goes through that parser; the signatures come from the tables
beside this file (`scripts/make_signatures.py` writes them from torch's type stubs).

The check runs on every call, so it is written for the common case: the first signature's
positional parameters matched in one loop, with a cache of the accepted argument classes.
"""
import functools
import inspect
import warnings

from .._scalars import type_name
from ..backends import cpu_kernels
from .exempt import EXEMPT
from .signature import Signature, describe_call
from .table_fft import FFT
from .table_linalg import LINALG
from .table_nn import FUNCTIONAL
from .table_tensor import METHODS
from .table_torch import FUNCTIONS

__all__ = ["Parser", "install"]


class Parser:
    """The overloads of one function: `check(args, kwargs)` raises PyTorch's TypeError when
    no overload accepts the call."""

    __slots__ = ("name", "text", "_signatures", "_fits", "keyword_positions")

    def __init__(self, name, signatures, keyword_positions=False):
        self.name = name
        self.text = signatures
        self.keyword_positions = keyword_positions   # (see table_nn's "wrapper")
        self._signatures = None
        self._fits = set()   # argument classes (and keywords) known to fit an overload

    @property
    def signatures(self):
        if self._signatures is None:   # parsed on first use: import stays cheap
            self._signatures = [Signature(text, self.keyword_positions) for text in self.text]
        return self._signatures

    def check(self, args, kwargs):
        """None when the call fits a current overload; the deprecated overload it fits, if
        that is the only one; else PyTorch's TypeError."""
        key = tuple([a.__class__ for a in args])
        if kwargs:
            key += tuple([(k, v.__class__) for k, v in kwargs.items()])
        if key in self._fits:
            return
        for sig in self.signatures:
            fit = sig.accepts(args, kwargs)
            if fit:
                if sig.sym_ints:
                    sig.convert(args, kwargs)
                if sig.deprecated:
                    return sig
                if fit == 2 and len(self._fits) < 64:
                    self._fits.add(key)
                return None
        raise self.error(args, kwargs)

    def error(self, args, kwargs):
        """PyTorch's TypeError for a call no overload accepts.

        NOTE: PyTorch hides its deprecated overloads (add(Tensor input, Number alpha, Tensor
        other)) from the message, but still accepts calls that match them.
        """
        visible = [s for s in self.signatures if not s.deprecated] or self.signatures
        chosen = next((s for s in self.signatures if s.matches_at_first(args, kwargs)), None)
        if chosen is not None:   # picked, then failed converting a later list element
            chosen.convert(args, kwargs)   # (unless an earlier one failed first)
            return TypeError(chosen.failure(self.name, args, kwargs))
        if len(visible) == 1:
            return TypeError(visible[0].failure(self.name, args, kwargs))
        # One overload with the call's arity and keywords: PyTorch names its failing argument.
        plausible = [s for s in visible if s.fits_shape(args, kwargs)]
        if len(plausible) == 1:
            return TypeError(plausible[0].failure(self.name, args, kwargs))
        lines = [f"{self.name}() received an invalid combination of arguments - got "
                 f"{describe_call(args, kwargs)}, but expected one of:"]
        for sig in visible:
            lines.append(f" * ({sig.printed})")
            mismatch = sig.mismatch_marks(args, kwargs)
            if mismatch is not None:
                lines.append("      didn't match because some of the arguments have invalid "
                             f"types: {mismatch}")
        return TypeError("\n".join(lines) + "\n")


def checked(fn, parser, method):
    """`fn` behind `parser`; a method's self is not part of the checked arguments."""
    check = parser.check
    if method:
        @functools.wraps(fn)
        def checked_method(self, *args, **kwargs):
            old = check(args, kwargs)
            if old is not None:
                return fn(self, **_modern(parser, old, args, kwargs))
            return fn(self, *args, **kwargs)
        checked_method.__ember_parser__ = parser
        return _compiled(fn, parser, True, checked_method)

    @functools.wraps(fn)
    def checked_function(*args, **kwargs):
        old = check(args, kwargs)
        if old is not None:
            return fn(**_modern(parser, old, args, kwargs))
        return fn(*args, **kwargs)
    checked_function.__ember_parser__ = parser
    return _compiled(fn, parser, False, checked_function)


def _compiled(fn, parser, method, checked_fn):
    """`checked_fn` with the kernel layer's compiled twin in front (backends/csrc/
    argument_check.c) when it is built: a call whose argument classes are in the parser's
    cache goes straight to `fn` without a Python frame, any other call to `checked_fn`."""
    compiled = cpu_kernels.compiled
    if compiled is None:
        return checked_fn
    twin = compiled.checked_call(fn, parser._fits, method, checked_fn)
    functools.update_wrapper(twin, fn)
    twin.__ember_parser__ = parser
    return twin


def _modern(parser, deprecated, args, kwargs):
    """The keywords of a call made through a deprecated overload, with PyTorch's warning."""
    modern = [s for s in parser.signatures if not s.deprecated]
    warnings.warn(f"This overload of {parser.name} is deprecated:\n\t{parser.name}("
                  f"{deprecated.printed})\nConsider using one of the following signatures "
                  "instead:\n" + "".join(f"\t{parser.name}({s.printed})" for s in modern),
                  UserWarning, stacklevel=3)
    return deprecated.by_keyword(args, kwargs)


def _wrappable(obj):
    return inspect.isfunction(obj) and not hasattr(obj, "__ember_parser__")


def install(namespace, tensor_class, functional):
    """Put the parser in front of ember.<name>, Tensor.<name>, nn.functional.<name>,
    linalg.<name> and fft.<name> for every name the tables list (ember's own names only:
    missing ones stay missing)."""
    for name, sigs in FUNCTIONS.items():
        fn = namespace.get(name)
        if f"torch.{name}" not in EXEMPT and _wrappable(fn):
            namespace[name] = _public(checked(fn, Parser(name, sigs), method=False),
                                      namespace["__name__"], name)
    for name, sigs in METHODS.items():
        fn = tensor_class.__dict__.get(name)
        if f"Tensor.{name}" not in EXEMPT and _wrappable(fn):
            setattr(tensor_class, name, _public(
                checked(fn, Parser(name, sigs), method=True), tensor_class.__module__,
                f"{tensor_class.__qualname__}.{name}"))
    from .. import fft, linalg   # (cycle: they load after the op table, which needs this package)
    for module, table in ((linalg, LINALG), (fft, FFT)):
        prefix = module.__name__.rpartition(".")[2]
        for name, (torch_name, sigs) in table.items():
            fn = getattr(module, name, None)
            if f"{prefix}.{name}" not in EXEMPT and _wrappable(fn):
                setattr(module, name, _public(checked(fn, Parser(torch_name, sigs),
                                                      method=False), module.__name__, name))
    for name, (torch_name, sigs, *wrapper) in FUNCTIONAL.items():
        fn = getattr(functional, name, None)
        if f"F.{name}" not in EXEMPT and _wrappable(fn):
            parser = Parser(torch_name, sigs, keyword_positions=bool(wrapper))
            setattr(functional, name, _public(checked(fn, parser, method=False),
                                              functional.__name__, name))


def _public(wrapper, module, qualname):
    """The checked function named where users reach it (ember.tanh, not the module that
    defines the unchecked one), so that pickle and copy find it by reference, as they find
    PyTorch's builtins."""
    wrapper.__module__, wrapper.__qualname__ = module, qualname
    return wrapper


def argument_type_name(value):
    """The type name PyTorch's messages print for an argument."""
    return type_name(value)
