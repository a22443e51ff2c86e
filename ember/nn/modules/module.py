"""nn.Module: the base class of every layer.

`__setattr__` routes Parameters, sub-Modules and buffers into their own dicts (with
PyTorch's errors); every named_* walk goes through `named_modules`, one memoised traversal.
"""
import warnings
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ...autograd.hooks import HookDict, RemovableHandle
from ...autograd.node import reset_grads
from ..parameter import Buffer, Parameter
from .module_casts import DeviceDtypeMethods

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook"]

_global_forward_hooks = OrderedDict()
_global_forward_pre_hooks = OrderedDict()


class _Revision:
    """Counts changes to any module's attributes, training flag or forward hooks: while it
    stands still, ember.compile's module guards hold without walking the modules."""
    n = 0


revision = _Revision()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def register_module_forward_pre_hook(hook):
    revision.n += 1
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    revision.n += 1
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


def _typename(obj):
    """PyTorch's torch.typename: 'torch.FloatTensor' for tensors, 'int' for builtins."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module(DeviceDtypeMethods):
    """Base class for all neural network modules."""

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = object.__setattr__
        d(self, "training", True)
        d(self, "_parameters", OrderedDict())
        d(self, "_buffers", OrderedDict())
        d(self, "_non_persistent_buffers_set", set())
        d(self, "_modules", OrderedDict())
        d(self, "_forward_hooks", HookDict())
        d(self, "_forward_hooks_with_kwargs", {})
        d(self, "_forward_hooks_always_called", {})
        d(self, "_forward_pre_hooks", HookDict())
        d(self, "_forward_pre_hooks_with_kwargs", {})
        d(self, "_backward_hooks", HookDict())
        d(self, "_backward_pre_hooks", HookDict())
        d(self, "_state_dict_hooks", HookDict())
        d(self, "_state_dict_pre_hooks", HookDict())
        d(self, "_load_state_dict_pre_hooks", HookDict())
        d(self, "_load_state_dict_post_hooks", HookDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name, tensor, persistent=True):
        revision.n += 1
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach()
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        revision.n += 1
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as "
                             "a function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        revision.n += 1
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            # NOTE: PyTorch names the offending module name, but not a parameter's or buffer's.
            got = f", got: {name}" if kind == "module" else ""
            raise KeyError(f'{kind} name can\'t contain "."{got}')

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        *path, name = target.split(".")
        parent = self.get_submodule(".".join(path))
        setattr(parent, name, module)

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ------------------------------------------------------------------ attribute routing
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        revision.n += 1
        d = self.__dict__
        params = d.get("_parameters")

        def remove_from(*dicts_or_sets):
            for container in dicts_or_sets:
                if name in container:
                    if isinstance(container, dict):
                        del container[name]
                    else:
                        container.discard(name)

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer) or (d.get("_buffers") is not None and
                                           name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            remove_from(d)
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        revision.n += 1
        for container in ("_parameters", "_buffers", "_modules"):
            c = self.__dict__.get(container)
            if c is not None and name in c:
                del c[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        attrs = dir(self.__class__) + list(self.__dict__) + list(self._parameters) + \
            list(self._modules) + list(self._buffers)
        return sorted(a for a in set(attrs) if not a[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every descendant, each module once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ------------------------------------------------------------------ modes and casts
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        revision.n += 1
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        reset_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def extra_repr(self):
        return ""

    def _get_name(self):
        return self.__class__.__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    # ------------------------------------------------------------------ calling and hooks
    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or
                self._backward_pre_hooks or _global_forward_hooks or
                _global_forward_pre_hooks):
            return self.forward(*args, **kwargs)
        from .hooks import call_with_hooks   # (deferred: `import ember` skips hooks.py)
        return call_with_hooks(self, args, kwargs)

    _call_impl = __call__

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              self._forward_pre_hooks_with_kwargs if with_kwargs else None)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        handle = self._add_hook(self._forward_hooks, hook, prepend,
                                self._forward_hooks_with_kwargs if with_kwargs else None)
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_hooks, hook, prepend, None)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_pre_hooks, hook, prepend, None)

    def register_backward_hook(self, hook):
        warnings.warn("Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes is deprecated and will be removed in future versions.",
                      FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)

    @staticmethod
    def _add_hook(hooks, hook, prepend, kwargs_set):
        revision.n += 1
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        if kwargs_set is not None:
            kwargs_set[handle.id] = True
        return handle

    # ------------------------------------------------------------------ state dict
    def register_state_dict_pre_hook(self, hook):
        return self._add_hook(self._state_dict_pre_hooks, hook, False, None)

    def register_state_dict_post_hook(self, hook):
        return self._add_hook(self._state_dict_hooks, hook, False, None)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        return self._add_hook(self._load_state_dict_pre_hooks, hook, False, None)

    _register_load_state_dict_pre_hook = register_load_state_dict_pre_hook

    def register_load_state_dict_post_hook(self, hook):
        return self._add_hook(self._load_state_dict_post_hooks, hook, False, None)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        from .state import save_state   # (deferred: `import ember` skips state.py)
        return save_state(self, destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False):
        from .state import load_local_state   # (deferred, as above)
        load_local_state(self, state_dict, prefix, local_metadata, strict, missing_keys,
                         unexpected_keys, error_msgs, assign)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        from .state import load_state_dict   # (deferred, as above)
        missing, unexpected = load_state_dict(self, state_dict, strict, assign)
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ misc
    def __getstate__(self):
        return self.__dict__.copy()

    def compile(self, *args, **kwargs):
        pass

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

