"""``dropout``: inverted dropout (``ops.nn_ops.Dropout``)."""

from __future__ import annotations

from ...ops import nn_ops
from ...tensor import Tensor
from ._checks import as_input, check_float, check_probability


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` and scale the others by 1/(1-p).

    Identity when ``training`` is False or ``p == 0``; all zeros when ``p == 1``.
    The mask comes from minitensor's generator, so ``mt.manual_seed`` makes it
    reproducible.

    >>> y = F.dropout(mt.ones(1000), p=0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    input = as_input(input, "input", "dropout")  # noqa: A001
    p = check_probability(p, "p", "dropout")
    if not training or p == 0:
        return input
    check_float(input, "dropout")
    return nn_ops.Dropout.apply(input, p=float(p))
