"""Parameters as one flat vector and back, as PyTorch's ``parameters_to_vector``/``vector_to_parameters``.

>>> import minitensor as mt
>>> ps = [mt.zeros(2, 2), mt.zeros(3)]
>>> vector_to_parameters(mt.arange(7.0), ps)
>>> parameters_to_vector(ps).tolist()
[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
"""

from __future__ import annotations

from collections.abc import Iterable

from ...ops.shape import cat
from ...tensor import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and joined in order: (total numel,). Differentiable."""
    params = list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"parameters_to_vector: parameters[{i}] must be a Tensor, got {type(p).__name__}")
    return cat([p.reshape(-1) for p in params], 0)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` (1-D) into the parameters' values, outside the graph."""
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise TypeError(f"vector_to_parameters: vec must be a 1-D Tensor, got {getattr(vec, 'shape', type(vec))}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vec has {vec.numel()} elements, the parameters hold {total}")
    offset = 0
    for p in params:
        n = p.numel()
        p._data[...] = vec._data[offset : offset + n].reshape(p.shape)
        p._version += 1
        offset += n
