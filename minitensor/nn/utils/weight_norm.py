"""``nn.utils.weight_norm`` and ``remove_weight_norm``: PyTorch's older weight normalisation API (deprecated
there in favour of ``nn.utils.parametrizations.weight_norm``; it warns the same here).

``weight_norm(module)`` replaces the parameter ``weight`` by two, ``weight_g`` (its norm over every dim
but ``dim``) and ``weight_v`` (its direction), and recomputes ``module.weight = weight_g * weight_v /
||weight_v||`` before every forward (a forward pre-hook).  State dict keys: ``weight_g``, ``weight_v``.

>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     layer = weight_norm(nn.Linear(4, 3))
>>> layer.weight_g.shape, layer.weight_v.shape
((3, 1), (3, 4))
"""

from __future__ import annotations

import warnings

from ..module import Module
from ..parameter import Parameter
from .parametrizations import _check_dim, norm_except_dim


class WeightNorm:
    """The forward pre-hook of the old API: sets ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _hooks(module: Module) -> dict:
    hooks = module.__dict__.get("_hooks")
    return {} if hooks is None else hooks.forward_pre


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` (see the module docstring); returns ``module``."""
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    for hook, _, _ in _hooks(module).values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"weight_norm: cannot register two weight_norm hooks on the same parameter {name!r}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter named {name!r}")
    fn = WeightNorm(name, _check_dim(dim, weight, "weight_norm"))
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, fn.dim).detach().numpy().copy()))
    module.register_parameter(name + "_v", Parameter(weight.detach().numpy().copy()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``module.<name>`` becomes one parameter again, with its current value."""
    for handle, (hook, _, _) in list(_hooks(module).items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            weight = hook.compute_weight(module).detach()
            delattr(module, name)
            del module._parameters[name + "_g"]
            del module._parameters[name + "_v"]
            setattr(module, name, Parameter(weight.numpy().copy()))
            handle.remove()
            return module
    raise ValueError(f"remove_weight_norm: weight_norm of {name!r} not found in {type(module).__name__}")
