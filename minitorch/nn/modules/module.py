"""``Module``: the base class of every layer and model.

A module owns three kinds of state, each kept in its own ordered dict and
filled automatically when you assign attributes in ``__init__``:

* ``_parameters`` - learnable tensors (``Parameter``), found by ``parameters()``;
* ``_buffers``    - other state saved with the model (BatchNorm's running mean);
* ``_modules``    - child modules, so a model is a tree of modules.

``model(x)`` calls ``forward(x)``, wrapped with hooks.  ``state_dict()``
flattens the tree into ``{'layer1.weight': tensor, ...}``; ``train()`` and
``eval()`` switch the ``training`` flag of every module in the tree, which
layers such as ``Dropout`` and ``BatchNorm`` read.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator

from ...autograd.graph import RemovableHandle, HookDict
from ...tensor import Tensor
from ..parameter import Parameter, UninitializedParameter
from .hooks import call_with_backward_hooks
from ...autograd.grad_mode import no_grad
from ...device import as_device
from ...dtype import as_dtype

__all__ = ["Module"]

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class IncompatibleKeys(_IncompatibleKeys):
    """The result of ``load_state_dict``: keys that were missing and unexpected."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


class Module:
    """Base class for all neural network modules; subclass it and define ``forward``."""

    training: bool
    _version: int = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", HookDict())
        object.__setattr__(self, "_forward_pre_hooks", HookDict())
        object.__setattr__(self, "_backward_hooks", HookDict())
        object.__setattr__(self, "_forward_hooks_with_kwargs", set())
        object.__setattr__(self, "_forward_pre_hooks_with_kwargs", set())
        object.__setattr__(self, "_state_dict_hooks", HookDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", HookDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function (abstract)')

    # -- registration -------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a ``None`` placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (minitorch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add state that is not learnable but is saved in ``state_dict`` (if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (minitorch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_module(self, name: str, module: "Module | None") -> None:
        self.add_module(name, module)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    @staticmethod
    def _check_name(name: Any, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def get_submodule(self, target: str) -> "Module":
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    # -- attribute magic ----------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, self.__dict__, self._buffers, self._modules)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(minitorch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, self.__dict__, self._parameters, self._buffers)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (minitorch.nn.Module or None expected)")
            modules[name] = value
            return
        if getattr(value, "_is_buffer", False) and isinstance(value, Tensor):
            # ``self.x = nn.Buffer(t)``: registers a buffer, like register_buffer.
            self._remove_from(name, self.__dict__, self._parameters, self._modules)
            self.register_buffer(name, value, getattr(value, "persistent", True))
            return
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(minitorch.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *dicts: dict) -> None:
        for d in dicts:
            if name in d:
                del d[name]

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            reg = d.get(registry)
            if reg is not None and name in reg:
                return reg[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # -- calling --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        if self._backward_hooks:
            output = call_with_backward_hooks(self, args, kwargs)
        else:
            output = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; it may return new args."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            _move_first(self._forward_pre_hooks, handle.id)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``: the way to capture features."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if prepend:
            _move_first(self._forward_hooks, handle.id)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the module's gradients are known."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    register_backward_hook = register_full_backward_hook

    # -- traversal ------------------------------------------------------------
    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator:
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator:
        """``(name, parameter)`` pairs; a parameter shared by two layers is listed once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator:
        """Every module in the tree, depth first, starting with ``self`` (named ``''``)."""
        if memo is None:
            memo = set()
        if remove_duplicate and id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    # -- modes and bulk changes ------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (Dropout drops, BatchNorm uses batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        """Set evaluation mode; same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all parameters (``None`` by default, as in PyTorch 2)."""
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if p._grad.grad_fn is not None:
                    p._grad = p._grad.detach()
                else:
                    p._grad.requires_grad_(False)
                p._grad.zero_()

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every submodule (children first) and on ``self``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Replace every parameter's and buffer's data with ``fn(data)``, keeping identity."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        for key, p in self._parameters.items():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is not p:
                _set_data(p, new)
                if p._grad is not None:
                    with no_grad():
                        _set_data(p._grad, fn(p._grad))
        for key, b in self._buffers.items():
            if b is not None:
                with no_grad():
                    self._buffers[key] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Move and/or cast parameters and buffers (floating-point ones for a dtype)."""
        dev = kwargs.get("device")
        dt = kwargs.get("dtype")
        for a in args:
            if isinstance(a, Tensor):
                dev, dt = a.device, a.dtype
            elif isinstance(a, str) or a.__class__.__name__ == "device":
                try:
                    dev = as_device(a)
                except (RuntimeError, TypeError):
                    dt = as_dtype(a)
            else:
                dt = as_dtype(a)
        if dt is not None and not as_dtype(dt).is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={as_dtype(dt)}")

        def convert(t: Tensor) -> Tensor:
            out = t
            if dev is not None:
                out = out.to(dev)
            if dt is not None and out.dtype.is_floating_point:
                out = out.to(dt)
            return out
        return self._apply(convert)

    def cpu(self) -> "Module":
        return self.to("cpu")

    def cuda(self, device: Any = None) -> "Module":
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int)
                                                      else device))

    def float(self) -> "Module":
        return self._apply(lambda t: t.float() if t.dtype.is_floating_point else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.double() if t.dtype.is_floating_point else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.half() if t.dtype.is_floating_point else t)

    def bfloat16(self) -> "Module":
        return self._apply(lambda t: t.bfloat16() if t.dtype.is_floating_point else t)

    def type(self, dst_type: Any) -> "Module":
        return self._apply(lambda t: t.type(dst_type))

    # -- state dict ---------------------------------------------------------------
    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by dotted name (detached unless keep_vars)."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {})
            if result is not None:
                destination = result
        return destination

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False
                        ) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into parameters and buffers (in place).

        With ``strict=True`` missing or unexpected keys raise ``RuntimeError``;
        otherwise they are reported in the returned named tuple.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        own = self.state_dict(keep_vars=True)
        for key, target in own.items():
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                              f'or Tensor-like object from checkpoint but received '
                              f'{type(value)}')
                continue
            if isinstance(target, UninitializedParameter):
                target.materialize(value._shape, dtype=value.dtype)
            if value._shape != target._shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
                continue
            with no_grad():
                if assign:
                    owner, _, name = key.rpartition(".")
                    mod = self.get_submodule(owner)
                    if name in mod._parameters:
                        mod._parameters[name] = Parameter(value, target.requires_grad)
                    else:
                        mod._buffers[name] = value
                else:
                    target.copy_(value)
        for key in state_dict:
            if key not in own:
                unexpected.append(key)
        if strict and (missing or unexpected):
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return IncompatibleKeys(missing, unexpected)

    # -- printing -------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside ``Name(...)``; layers override it (``in_features=2, ...``)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append(f"({key}): {mod_str}")
        main = self._get_name() + "("
        body = lines + child_lines
        if body:
            if len(lines) == 1 and not child_lines:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(body) + "\n"
        return main + ")"

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def _move_first(hooks: dict, key: int) -> None:
    """Reorder a hook dict so that ``key`` runs first."""
    items = list(hooks.items())
    hooks.clear()
    hooks[key] = dict(items)[key]
    hooks.update((k, v) for k, v in items if k != key)


def _set_data(p: Tensor, new: Tensor) -> None:
    """Point ``p`` at ``new``'s data, keeping the Python object (and optimizer references)."""
    p._storage, p._shape, p._stride, p._offset = new._storage, new._shape, new._stride, new._offset
    p.dtype, p.device = new.dtype, new.device
