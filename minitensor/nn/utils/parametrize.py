"""``nn.utils.parametrize``, as PyTorch's: a module's tensor computed from other tensors each time it is read.

``register_parametrization(module, "weight", p)`` replaces the parameter ``weight`` by a property: reading
``module.weight`` returns ``p(original)``, where ``original`` is the old parameter, now kept (the same
Parameter object, so an optimizer holding it keeps working) in ``module.parametrizations.weight``:

    module.parametrizations            a ModuleDict, one entry per parametrized tensor
    module.parametrizations.weight     a ParametrizationList: the parametrizations [p0, p1, ...] and
                                       ``original`` (or ``original0``, ``original1``, ... when p0's
                                       ``right_inverse`` splits the tensor in several)
    module.weight                      p_n(... p1(p0(original)))

The module's class becomes a subclass ``Parametrized<Class>`` that holds the property, as in PyTorch
(so its repr and state dict keys are PyTorch's: ``parametrizations.weight.original``).  Assigning
``module.weight = value`` runs the parametrizations' ``right_inverse`` chain backwards and stores the
result in ``original``.  ``cached()`` computes each parametrized tensor once inside its block (e.g. a
weight used at every step of an RNN); ``remove_parametrizations`` turns it back into a plain parameter.

>>> class Symmetric(nn.Module):
...     def forward(self, x):
...         return x.triu() + x.triu(1).transpose(0, 1)
>>> layer = nn.Linear(3, 3)
>>> _ = register_parametrization(layer, "weight", Symmetric())
>>> w = layer.weight
>>> bool((w == w.T).all()), type(layer).__name__, list(layer.state_dict())
(True, 'ParametrizedLinear', ['bias', 'parametrizations.weight.original'])
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import contextmanager

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..container import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

_state = threading.local()  # the cache of ``cached()`` blocks: per thread, as grad mode


@contextmanager
def cached():
    """Inside the block, each parametrized tensor is computed once, at its first read, and reused."""
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    if depth == 0:
        _state.cache = {}
    try:
        yield
    finally:
        _state.depth = depth
        if depth == 0:
            _state.cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_values(target: Tensor, value: Tensor, what: str, unsafe: bool) -> None:
    """``target``'s values become ``value``'s, in place (the Tensor object stays: optimizers hold it)."""
    if not unsafe and (value.shape != target.shape or value.dtype != target.dtype):
        raise ValueError(
            f"{what}: right_inverse must keep the shape and dtype of the original tensor "
            f"{target.shape} {target.dtype}, got {value.shape} {value.dtype}; pass unsafe=True to allow it"
        )
    if value.shape == target.shape and value.dtype == target.dtype:
        target._data[...] = value._data
    else:
        target._data = value._data.copy()
    target._version += 1


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (``self[0]``, ``self[1]``, ...), and the tensor they start from:
    ``original``, or ``original0``, ``original1``, ... when the first one's ``right_inverse`` returns a
    sequence.  Calling it computes the parametrized tensor."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if not modules:
            raise ValueError("ParametrizationList: needs at least one parametrization")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            _set_values(original, new, "register_parametrization", unsafe)
            _register_parameter_or_buffer(self, "original", original)
            self.ntensors = 1
        else:
            if not isinstance(new, Sequence) or not all(isinstance(t, Tensor) for t in new):
                raise ValueError(
                    "register_parametrization: right_inverse must return a Tensor or a sequence of Tensors, "
                    f"got {type(new).__name__}"
                )
            self.ntensors = len(new)
            for i, value in enumerate(new):
                value = value.detach()
                if isinstance(original, Parameter):
                    value = Parameter(value.numpy().copy(), requires_grad=original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", value)
        if not unsafe:
            self._check_consistency(original)

    def _check_consistency(self, original: Tensor) -> None:
        """Without ``unsafe``, a parametrization may not change the tensor's shape or dtype."""
        with no_grad():
            value = self()
        if not isinstance(value, Tensor):
            raise ValueError(f"register_parametrization: a parametrization must return a Tensor, got {type(value)}")
        if value.shape != original.shape or value.dtype != original.dtype:
            raise ValueError(
                "register_parametrization: the parametrization may not change the shape or dtype of the tensor "
                f"(unless unsafe=True): {original.shape} {original.dtype} became {value.shape} {value.dtype}"
            )

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` as the parametrized tensor: run the ``right_inverse`` chain backwards into the originals."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse, so the "
                        "parametrized tensor cannot be assigned"
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                _set_values(self.original, value, "assignment to a parametrized tensor", self.unsafe)
                return
            if not isinstance(value, Sequence) or len(value) != self.ntensors:
                raise ValueError(f"right_inverse must return a sequence of {self.ntensors} Tensors, got {value!r}")
            for i, tensor in enumerate(value):
                _set_values(getattr(self, f"original{i}"), tensor, "assignment to a parametrized tensor", self.unsafe)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Make ``module`` an instance of a new subclass ``Parametrized<Class>`` that will hold the properties."""
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__doc__": cls.__doc__})


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if getattr(_state, "depth", 0) == 0:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _state.cache:
            _state.cache[key] = parametrization()
        return _state.cache[key]

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False):
    """Make ``module.<tensor_name>`` be ``parametrization(original)`` from now on (see the module docstring).

    ``parametrization`` is a Module whose ``forward`` maps the original tensor (or the tensors its
    ``right_inverse`` returns) to the parametrized one; an optional ``right_inverse`` maps back, and also
    gives the original its first value.  A second registration on the same tensor chains after the first.
    ``unsafe=True`` allows a parametrization that changes the shape or dtype.  Returns ``module``.
    """
    if not isinstance(module, Module):
        raise TypeError(f"register_parametrization: module must be an nn.Module, got {type(module).__name__}")
    if not isinstance(parametrization, Module):
        raise TypeError(
            f"register_parametrization: parametrization must be an nn.Module, got {type(parametrization).__name__}"
        )
    if is_parametrized(module, tensor_name):
        if not unsafe:
            with no_grad():
                y = getattr(module, tensor_name)
                x = parametrization(y)
            if not isinstance(x, Tensor) or x.shape != y.shape or x.dtype != y.dtype:
                raise ValueError(
                    "register_parametrization: the parametrization may not change the shape or dtype of the tensor "
                    f"(unless unsafe=True): {y.shape} {y.dtype} became {getattr(x, 'shape', x)}"
                )
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(
            f"register_parametrization: module {type(module).__name__} has no parameter, buffer or parametrized "
            f"tensor named {tensor_name!r}"
        )
    original = getattr(module, tensor_name)
    if original is None:
        raise ValueError(f"register_parametrization: {type(module).__name__}.{tensor_name} is None")
    parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = parametrizations
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, or on any tensor)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before ``register_parametrization`` changed it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Turn ``module.<tensor_name>`` back into a plain parameter (or buffer): its current parametrized value
    (``leave_parametrized=True``) or its original.  The original Parameter object is kept when it is one
    tensor.  When no parametrization is left, the module gets its class back."""
    if not is_parametrized(module, tensor_name):
        name = type(module).__name__
        raise ValueError(f"remove_parametrizations: module {name} has no parametrization on {tensor_name!r}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_values(original, value, "remove_parametrizations", unsafe=True)
    else:
        if not leave_parametrized:
            raise ValueError(
                "remove_parametrizations: leave_parametrized=False is impossible for a tensor parametrized by "
                "several tensors (there is no one original to go back to)"
            )
        value = getattr(module, tensor_name).detach()
        if parametrizations.original0.requires_grad:
            value = Parameter(value.numpy().copy())
        original = value
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
