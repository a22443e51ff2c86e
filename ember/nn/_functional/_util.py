"""Helpers shared by the functional modules."""
import warnings




def reduction_of(size_average, reduce, reduction):
    """The `reduction` string implied by the legacy size_average/reduce arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{result}' instead.", UserWarning, stacklevel=3)
    return result


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
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)


def _size(t):
    return "torch.Size([" + ", ".join(map(str, t.shape)) + "])"


