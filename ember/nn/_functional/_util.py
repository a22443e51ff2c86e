"""Helpers shared by the functional modules."""
import warnings

from ..._signatures import Parser
from ..._signatures.table_nn import FUNCTIONAL
from ..._signatures.table_torch import FUNCTIONS


def reduction_of(size_average, reduce, reduction):
    """The `reduction` string implied by the legacy size_average/reduce arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    # (torch's order of truth tests: size_average first)
    result = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{result}' instead.", UserWarning, stacklevel=3)
    return result


def reduction_name(enum):
    """torch's apply_loss_reduction: 1 is a mean, 2 a sum, any other enum no reduction."""
    return "mean" if enum == 1 else "sum" if enum == 2 else "none"


def builtin_parser(name):
    """The argument parser of torch.<name>: the builtin a torch Python loss hands its
    arguments to, after turning its reduction into the enum."""
    return Parser(name, FUNCTIONS[name])


def functional_parser(name):
    """The argument parser of nn.functional.<name>'s builtin, for a function whose own Python
    checks come before it (it then carries the parser, and the tables do not wrap it again)."""
    torch_name, signatures, *wrapper = FUNCTIONAL[name]
    return Parser(torch_name, signatures, keyword_positions=bool(wrapper))


def reduction_enum(reduction):
    """torch's _Reduction.get_enum: what its Python losses hand their builtins."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", UserWarning, stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce_loss(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def check_same_size(input, target, name):
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({torch_size(target)}) that is different to the input size "
            f"({torch_size(input)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)


def torch_size(t):
    """How torch prints t.size()."""
    return "torch.Size([" + ", ".join(map(str, t.shape)) + "])"


def compare_sizes(input, target):
    """torch's wrappers compare target.size() with input.size() (a non-tensor fails there) and
    warn when they differ."""
    if target.size() != input.size():
        check_same_size(input, target, None)


def weighted_reduction(loss, weight, reduction, mean):
    """The weighted composites' reduction; `mean` of the weighted loss."""
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return mean(weighted)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def check_weight(weight, input):
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
