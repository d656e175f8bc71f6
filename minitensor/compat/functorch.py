"""``import functorch`` under the switch: PyTorch's older name for ``torch.func``.

functorch's transforms are ``torch.func``'s (``grad``, ``vmap``, ``jacrev`` ...): this module
gives minitensor's.  Its stateful-module helpers (``make_functional``,
``make_functional_with_buffers``, ``combine_state_for_ensemble``) were deprecated by
PyTorch 2.0 in favour of ``torch.func.functional_call`` and ``stack_module_state``;
minitensor does not provide them, and calling one says what to use instead.
"""

from __future__ import annotations

import types

from .. import func

_REPLACED = {
    "make_functional": "torch.func.functional_call(module, params, args)",
    "make_functional_with_buffers": "torch.func.functional_call(module, (params, buffers), args)",
    "combine_state_for_ensemble": "torch.func.stack_module_state(models) with torch.func.functional_call",
}


def _replaced(name: str, instead: str):
    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"functorch.{name} is deprecated since PyTorch 2.0 and minitensor does not provide it: use {instead} "
            "(see docs/transforms.md)"
        )

    refuse.__name__ = name
    return refuse


def module() -> types.ModuleType:
    """The ``functorch`` module: ``torch.func``'s names, and the deprecated helpers refusing."""
    functorch = types.ModuleType("functorch", __doc__)
    functorch.__dict__.update({name: getattr(func, name) for name in func.__all__})
    functorch.__dict__.update({name: _replaced(name, instead) for name, instead in _REPLACED.items()})
    return functorch
