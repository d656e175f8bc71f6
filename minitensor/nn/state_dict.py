"""``state_dict`` and ``load_state_dict``: a module's parameters and persistent buffers by dotted name.

``Module`` inherits these methods from ``StateDictMethods``.  The names and their
order are PyTorch's, so weights move between the two libraries through NumPy.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np

from ..tensor import Tensor

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class StateDictMethods:
    """Mixed into ``Module``; see the module docstring."""

    def _state_tensors(self, prefix: str = "") -> OrderedDict[str, Tensor]:
        """Dotted name -> Tensor of everything ``state_dict`` saves, in PyTorch's order."""
        out = OrderedDict()
        stack = [(prefix, self)]
        while stack:
            module_prefix, module = stack.pop()
            for name, param in module._parameters.items():
                if param is not None:
                    out[module_prefix + name] = param
            for name, buf in module._buffers.items():
                if buf is not None and name not in module._non_persistent_buffers:
                    out[module_prefix + name] = buf
            children = [(module_prefix + name + ".", m) for name, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))
        return out

    def state_dict(self, prefix: str = "") -> OrderedDict[str, Tensor]:
        """An ordered dict of dotted name -> Tensor, parameters then persistent buffers per module.

        Each value shares memory with its parameter or buffer, outside the graph
        (``p.detach()``, as PyTorch): ``sd[k].numpy()`` is the array itself, and
        ``with mt.no_grad(): sd[k].copy_(w)`` writes into the model.  Copy the
        values (``mt.save`` does) to keep a snapshot that later training will not change.

        >>> list(nn.Linear(2, 3).state_dict())
        ['weight', 'bias']
        """
        return OrderedDict((name, t.detach()) for name, t in self._state_tensors(prefix).items())

    def load_state_dict(self, state_dict, strict: bool = True) -> IncompatibleKeys:
        """Copy arrays (NumPy arrays, Tensors, or anything with ``__array__``) into the parameters and buffers.

        Every key, shape and value is checked first: with ``strict=True`` a
        missing or unexpected key, and always a shape mismatch, raises
        ``RuntimeError`` naming the keys; a value that is not numbers (strings,
        a structured or object array) raises ``TypeError`` naming its key; in
        both cases nothing is changed.  Values are cast to each parameter's
        dtype; the Parameter objects stay the same.

        Returns:
            ``(missing_keys, unexpected_keys)`` as a named tuple.
        """
        if not hasattr(state_dict, "items"):
            raise TypeError(f"load_state_dict: expected a dict of arrays, got {type(state_dict).__name__}")
        targets = self._state_tensors()
        missing = [k for k in targets if k not in state_dict]
        unexpected = [k for k in state_dict if k not in targets]
        errors = []
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        if strict and missing:
            errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        values = {}
        for key, value in state_dict.items():
            if key not in targets:
                continue
            array = _as_state_array(key, value, targets[key].dtype)
            if array.shape != targets[key].shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {array.shape} from checkpoint, "
                    f"the shape in current model is {targets[key].shape}."
                )
            values[key] = array
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        for key, array in values.items():  # every value is cast and checked: nothing below can fail
            target = targets[key]
            target._data[...] = array
            target._version += 1
        return IncompatibleKeys(missing, unexpected)


def _as_state_array(key: str, value, dtype: np.dtype) -> np.ndarray:
    """A state dict value as an array of ``dtype``: from a Tensor, a NumPy array, or anything with
    ``__array__`` (e.g. a detached torch tensor); only numbers (bool, int, float) are accepted."""
    if isinstance(value, Tensor):
        value = value._data
    elif not isinstance(value, np.ndarray):
        if not hasattr(value, "__array__"):
            raise TypeError(
                f"load_state_dict: value of {key!r} must be a numpy array or Tensor, got {type(value).__name__}"
            )
        value = np.asarray(value)
    if value.dtype.kind not in "biuf":
        raise TypeError(
            f"load_state_dict: value of {key!r} has dtype {value.dtype}; expected numbers (bool, int or float)"
        )
    return value.astype(dtype, copy=False)
