"""``functional_call`` and ``stack_module_state``: a module as a function of its parameters.

A ``Module`` keeps its parameters inside itself; the function transforms want a pure
function ``f(params, x)``.  ``functional_call(model, params, (x,))`` runs ``model(x)``
with the Tensors of ``params`` (a dict: dotted name -> Tensor) in place of the
module's own parameters and buffers, and puts the originals back afterwards, even if
the forward raises.  So ``grad(lambda p, x: loss(functional_call(model, p, (x,))))``
differentiates with respect to ``p``, and ``vmap`` can run an ensemble of models
stacked by ``stack_module_state``.

>>> model = nn.Linear(3, 1)
>>> params = {name: p.detach() * 0 for name, p in model.named_parameters()}
>>> functional_call(model, params, (mt.ones(2, 3),)).tolist()
[[0.0], [0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..nn.module import Module
from ..ops.shape import stack
from ..tensor import Tensor


def functional_call(module: Module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:  # fmt: skip
    """``module(*args, **kwargs)`` with the parameters and buffers named in ``parameter_and_buffer_dicts``
    (a dict, or a sequence of dicts with no key in two of them) replaced by the given Tensors.

    ``tie_weights``: a Tensor given for one name of tied weights (one Tensor under two names)
    replaces it under every name.  ``strict``: every parameter and buffer must be given, and
    nothing else.  A name that is neither (without ``strict``) is set as a plain attribute for the call.
    """
    replacements = _merged(parameter_and_buffer_dicts)
    if tie_weights:
        replacements = _tied(module, replacements)
    if strict:
        _check_strict(module, replacements)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    saved = []
    try:
        for name, tensor in replacements.items():
            saved.append(_swap(module, name, tensor))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, store, key, old in reversed(saved):
            if store is None:  # (a plain attribute made for the call)
                del owner.__dict__[key]
            else:
                store[key] = old


def _merged(dicts) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, Sequence):
        raise TypeError(
            "functional_call: parameter_and_buffer_dicts must be a dict or a sequence of dicts, "
            f"got {type(dicts).__name__}"
        )
    merged: dict = {}
    for d in dicts:
        repeated = sorted(set(merged) & set(d))
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged.update(d)
    return merged


def _tied(module: Module, replacements: dict) -> dict:
    """``replacements`` with each tensor given for one name of a group of tied weights given for all."""
    groups: dict = {}
    for name, tensor in (
        *module.named_parameters(remove_duplicate=False),
        *module.named_buffers(remove_duplicate=False),
    ):
        groups.setdefault(id(tensor), []).append(name)
    out = dict(replacements)
    for names in groups.values():
        given = [n for n in names if n in replacements]
        if len(names) < 2 or not given:
            continue
        if len({id(replacements[n]) for n in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                "Consider using tie_weights=False"
            )
        for n in names:
            out[n] = replacements[given[0]]
    return out


def _check_strict(module: Module, replacements: dict) -> None:
    names = [
        n for n, _ in (*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False))
    ]
    unexpected = [n for n in replacements if n not in names]
    missing = [n for n in names if n not in replacements]
    if unexpected or missing:
        lines = []
        if unexpected:
            lines.append(f"\tUnexpected key(s): {', '.join(repr(n) for n in unexpected)}.")
        if missing:
            lines.append(f"\tMissing key(s): {', '.join(repr(n) for n in missing)}.")
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))


def _swap(module: Module, name: str, tensor) -> tuple:
    """Put ``tensor`` under the dotted ``name``; (owner, its dict or None, key, old value) to undo it."""
    *path, key = name.split(".")
    owner = module
    for part in path:
        owner = owner._modules.get(part) if isinstance(owner, Module) else None
        if owner is None:
            raise AttributeError(f"functional_call: {type(module).__name__} has no sub-module {part!r} (in {name!r})")
    for store in (owner._parameters, owner._buffers):
        if key in store:
            old = store[key]
            store[key] = tensor
            return owner, store, key, old
    owner.__dict__[key] = tensor
    return owner, None, key, None


def stack_module_state(models) -> tuple[dict, dict]:
    """(params, buffers) of ``models`` (same class, same mode) stacked along a new dim 0, by name:
    new leaves (detached), requiring grad where the models' parameters do; for ``vmap`` over an ensemble.

    >>> models = [nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = stack_module_state(models)
    >>> params["weight"].shape
    (4, 2, 3)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if any(m.training != models[0].training for m in models):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {
        name: _stacked([dict(m.named_parameters())[name] for m in models]) for name, _ in models[0].named_parameters()
    }
    buffers = {name: _stacked([dict(m.named_buffers())[name] for m in models]) for name, _ in models[0].named_buffers()}
    return params, buffers


def _stacked(tensors: list) -> Tensor:
    leaf = stack([t.detach() for t in tensors])
    return leaf.requires_grad_(True) if all(t.requires_grad for t in tensors) else leaf
