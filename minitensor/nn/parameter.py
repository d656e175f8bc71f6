"""``Parameter``: a Tensor that a Module registers as one of its learnable weights.

Setting a Parameter as an attribute of a Module (``self.weight = Parameter(...)``)
is what makes it appear in ``module.parameters()`` and ``module.state_dict()``.
A Parameter is an ordinary leaf Tensor otherwise; ops on it return plain Tensors.

>>> import minitensor as mt
>>> w = nn.Parameter(mt.zeros(2, 3))
>>> w.requires_grad, w.is_leaf
(True, True)
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor with ``requires_grad=True`` (unless told otherwise).

    Args:
        data: a Tensor (its array is shared, not copied, and the Parameter is
            a new leaf outside any graph), a NumPy array (shared, dtype kept),
            or nested lists/numbers (copied, floats get the default dtype).
            ``None`` gives an empty tensor of the default dtype.
        requires_grad: whether the parameter is trained.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        if data is None:
            array = np.empty(0, dtype=dtypes.get_default_dtype())
        elif isinstance(data, Tensor):
            array = data._data
        elif isinstance(data, np.ndarray):
            array = data
        else:
            array = Tensor(data)._data
        self._data = array
        self.grad = None
        self.grad_fn = None
        self._requires_grad = False
        self._version_counter = None
        self._view_of = None
        self._hooks = None
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        """A Parameter with a copy of the data (not of ``.grad``), as PyTorch does."""
        if id(self) not in memo:
            memo[id(self)] = Parameter(self._data.copy(), self.requires_grad)
        return memo[id(self)]
