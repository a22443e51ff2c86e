"""Top-level spellings of in-place Tensor methods that torch also exposes as functions
(`torch.gcd_(a, b)` is `a.gcd_(b)`): the method is the one definition, these check the
first argument as torch's function forms do and call it."""
from .registry import check_tensor, export

__all__ = ["gcd_", "lcm_", "ldexp_", "i0_", "as_strided_", "resize_as_"]


def gcd_(input, other):
    check_tensor("gcd_", input)
    return input.gcd_(other)


def lcm_(input, other):
    check_tensor("lcm_", input)
    return input.lcm_(other)


def ldexp_(input, other):
    check_tensor("ldexp_", input)
    return input.ldexp_(other)


def i0_(input):
    check_tensor("i0_", input)
    return input.i0_()


def as_strided_(input, size, stride, storage_offset=None):
    check_tensor("as_strided_", input)
    return input.as_strided_(size, stride, storage_offset)


def resize_as_(input, the_template, *, memory_format=None):
    check_tensor("resize_as_", input)
    return input.resize_as_(the_template, memory_format=memory_format)


for _name in __all__:
    export(globals()[_name], method=False)
