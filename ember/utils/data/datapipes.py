"""DataPipes (torch.utils.data's IterDataPipe and MapDataPipe): datasets composed by chained
calls, `dp.map(fn).batch(4)`, each call wrapping the pipe in another.

A pipe class registered under a name (`@functional_datapipe("name")`) becomes a method of
every pipe of its kind: `dp.name(*args)` is `Class(dp, *args)`. The built-in forms (map,
filter, batch, ...) are in builtin_datapipes.py, registered when this package loads.
`non_deterministic` marks pipes whose output order is not fixed, and
`guaranteed_datapipes_determinism` refuses to build them.
"""
import functools

from .dataset import Dataset, IterableDataset

__all__ = ["IterDataPipe", "MapDataPipe", "DataChunk", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic"]


class _FunctionalForms:
    """What IterDataPipe and MapDataPipe share: the registry of functional forms and the
    hooks PyTorch lets users set on pickling and printing."""

    functions = {}
    getstate_hook = None
    reduce_ex_hook = None
    str_hook = None
    repr_hook = None

    def __getattr__(self, attribute_name):
        function = type(self).functions.get(attribute_name)
        if function is not None:
            bound = functools.partial(function, self)
            functools.update_wrapper(bound, function, updated=())
            return bound
        # (PyTorch's message, missing its closing quote, kept as it is)
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute "
                             f"'{attribute_name}")

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(  # noqa: TRY002  (PyTorch raises a bare Exception here)
                f"Unable to add DataPipe function name {function_name} as it is already taken")

        def make_pipe(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)
        functools.update_wrapper(make_pipe, cls_to_register.__init__, updated=())
        cls.functions[function_name] = make_pipe

    def __getstate__(self):
        if type(self).getstate_hook is not None:
            return type(self).getstate_hook(self)
        return self.__dict__

    def __reduce_ex__(self, *args, **kwargs):
        if type(self).reduce_ex_hook is not None:
            try:
                return type(self).reduce_ex_hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def set_getstate_hook(cls, hook_fn):
        if cls.getstate_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing getstate_hook")
        cls.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn):
        if cls.reduce_ex_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing reduce_ex_hook")
        cls.reduce_ex_hook = hook_fn

    def __repr__(self):
        if self.repr_hook is not None:
            return self.repr_hook(self)
        return str(self.__class__.__qualname__)

    def __str__(self):
        if self.str_hook is not None:
            return self.str_hook(self)
        return str(self.__class__.__qualname__)

    def __dir__(self):
        return list(super().__dir__()) + list(type(self).functions)


class IterDataPipe(_FunctionalForms, IterableDataset):
    """A DataPipe read as a stream (`__iter__`)."""

    functions = {}
    getstate_hook = None
    reduce_ex_hook = None

    def reset(self):
        """Called when a new iteration starts; a pipe with per-iteration state clears it."""


class MapDataPipe(_FunctionalForms, Dataset):
    """A DataPipe read by key (`__getitem__`, `__len__`)."""

    functions = {}
    getstate_hook = None
    reduce_ex_hook = None


class DataChunk(list):
    """A batch made by `batch()`: a list that prints its items and iterates them raw."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


class functional_datapipe:
    """Class decorator: `@functional_datapipe("name")` makes `dp.name(*args)` build this pipe
    on `dp` (for IterDataPipe or MapDataPipe subclasses)."""

    name: str

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism = [False]


class guaranteed_datapipes_determinism:
    """Inside, building a pipe marked `non_deterministic` raises TypeError."""

    def __init__(self):
        self.prev = _determinism[0]
        _determinism[0] = True

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        _determinism[0] = self.prev


class non_deterministic:
    """Marks an IterDataPipe class as non-deterministic (`@non_deterministic`), or, given a
    function of the pipe's arguments, as non-deterministic when the function says so
    (`@non_deterministic(fn)`)."""

    def __init__(self, arg):
        self.cls = None
        self.deterministic_fn = None
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism[0]:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off "
                                "determinism for this DataPipe if that is acceptable for your "
                                "application")
            return self.cls(*args, **kwargs)
        cls = args[0]
        if not (isinstance(cls, type) and issubclass(cls, IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {cls.__name__} is "
                            "found")
        self.cls = cls
        return self._decided

    def _decided(self, *args, **kwargs):
        result = self.deterministic_fn(*args, **kwargs)
        if not isinstance(result, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to "
                            f"return a boolean value, but {type(result)} is found")
        if _determinism[0] and result:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but "
                            "you set 'guaranteed_datapipes_determinism'. You can turn off "
                            "determinism for this DataPipe if that is acceptable for your "
                            "application")
        return self.cls(*args, **kwargs)
