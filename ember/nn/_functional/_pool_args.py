"""What the pooling functions share about their arguments: int lists as torch's parser hands
them on, torch's _single/_pair/_triple."""
import collections.abc
import operator

from ... import _dtype as dt

COUNT = {1: "one", 2: "two", 3: "three"}
FLOATS = (dt.float32, dt.float64, dt.float16, dt.bfloat16)


def int_list(value, n):
    """An int-list argument as torch's parser hands it to the kernel: an int repeated n
    times, a list with its own length."""
    if isinstance(value, (list, tuple)):
        return tuple(operator.index(e) for e in value)
    return (operator.index(value),) * n


def ntuple(value, n):
    """torch's _single/_pair/_triple: an iterable as a tuple, anything else repeated n
    times."""
    if isinstance(value, collections.abc.Iterable):
        return tuple(value)
    return (value,) * n


def refuse_none(name, **args):
    """The parser's TypeError for a None int list (the signature tables let None through:
    torch's take it for a sized int list only where the argument is optional)."""
    for position, (arg, value) in enumerate(args.items(), 2):
        if value is None and arg != "stride":
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                            "ints, not NoneType")
