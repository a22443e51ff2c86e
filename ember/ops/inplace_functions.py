"""Top-level spellings of in-place Tensor methods that torch also exposes as functions
(`torch.gcd_(a, b)` is `a.gcd_(b)`): the method is the one definition, these check the
first argument as torch's function forms do and call it. The in-place activations
(torch.celu_, selu_, rrelu_, threshold_, dropout_) run nn.functional's kernels and are
nn/_functional/torch_entry_points.py's."""
from .inplace import make_inplace
from .registry import METHODS, PUBLIC, check_tensor, export
from .complex import conj_physical

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


# ---------------------------------------------------------------------- in-place aliases
# torch.<op>_(input, ...) is Tensor.<op>_ wherever PyTorch has both.
_METHOD_ALIASES = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_",
    "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "index_put_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_",
    "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
    "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "addmv_")


def _method_alias(name):
    def alias(input, *args, **kwargs):
        check_tensor(name, input)
        return getattr(input, name)(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = name
    return alias


for _name in _METHOD_ALIASES:
    PUBLIC[_name] = _method_alias(_name)

METHODS["conj_physical_"] = make_inplace(conj_physical, "conj_physical_")
PUBLIC["conj_physical_"] = _method_alias("conj_physical_")

