"""state_dict and load_state_dict: a module tree's state, saved and copied back in with
PyTorch's checks and errors."""
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .module import Module


def load_local_state(module, state_dict, prefix, local_metadata, strict, missing_keys,
                     unexpected_keys, error_msgs, assign):
    """Load this module's own parameters and persistent buffers from `state_dict`."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
             error_msgs)
    persistent = {k: v for k, v in module._buffers.items()
                  if k not in module._non_persistent_buffers_set}
    local = {k: v for k, v in list(module._parameters.items()) + list(persistent.items())
             if v is not None}
    for name, param in local.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        value = state_dict[key]
        if not isinstance(value, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected '
                              "torch.Tensor or Tensor-like object from checkpoint but received "
                              f"{type(value)}")
            continue
        if value.shape != param.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                              f"{_size(value)} from checkpoint, the shape in current model is "
                              f"{_size(param)}.")
            continue
        try:
            if assign:
                if isinstance(param, Parameter) and not isinstance(value, Parameter):
                    value = Parameter(value, requires_grad=param._requires_grad)
                setattr(module, name, value)
            else:
                with no_grad():
                    param.copy_(value)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                              f"the model are {_size(param)} and whose dimensions in the "
                              f"checkpoint are {_size(value)}, an exception occurred : "
                              f"{ex.args}.")
    extra_key = prefix + "_extra_state"
    if type(module).set_extra_state is not _base_set_extra_state():
        if extra_key in state_dict:
            module.set_extra_state(state_dict[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                input_name = key[len(prefix):].split(".", 1)
                if input_name[0] not in module._modules and input_name[0] not in local:
                    unexpected_keys.append(key)


def _base_set_extra_state():
    return Module.set_extra_state


def _size(t):
    return "torch.Size([" + ", ".join(map(str, t.shape)) + "])"


def load_state_dict(root, state_dict, strict, assign):
    if not isinstance(state_dict, dict):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing, unexpected, errors = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = dict(state_dict)

    def load(module, prefix, sub_state):
        """The module's own entries, then each child's (from the entries under its name),
        then the module's post-hooks."""
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        module._load_from_state_dict(sub_state, prefix, local_metadata, True, missing,
                                     unexpected, errors, assign)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(child, child_prefix, {k: v for k, v in sub_state.items()
                                           if k.startswith(child_prefix)})
        for hook in module._load_state_dict_post_hooks.values():
            hook(module, _Keys(missing, unexpected))

    load(root, "", state_dict)
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            root.__class__.__name__, "\n\t".join(errors)))
    return missing, unexpected


class _Keys:
    def __init__(self, missing, unexpected):
        self.missing_keys = missing
        self.unexpected_keys = unexpected


def save_state(module, destination, prefix, keep_vars):
    """Module.state_dict's walk: the state-dict pre-hooks, this module's own entries, its
    children's under their names, then the post-hooks (which may replace the dict)."""
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = {"version": module._version}
    for hook in module._state_dict_pre_hooks.values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
    for hook in module._state_dict_hooks.values():
        result = hook(module, destination, prefix, {})
        if result is not None:
            destination = result
    return destination
