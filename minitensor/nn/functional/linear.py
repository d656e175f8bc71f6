"""``linear``: the affine map y = x @ W.T + b, one fused op (``ops.nn_ops.Linear``)."""

from __future__ import annotations

from ...ops import nn_ops
from ...tensor import Tensor
from ._checks import as_input, check_same_dtype, check_tensor


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """y = input @ weight.T + bias.

    Args:
        input: (..., in_features); a NumPy array is converted (a float one to weight's dtype).
        weight: (out_features, in_features).
        bias: (out_features,) or None.

    Returns:
        (..., out_features).

    >>> F.linear(mt.ones(2, 3), mt.ones(4, 3)).shape
    (2, 4)
    """
    check_tensor(weight, "weight", "linear")
    input = as_input(input, "input", "linear", like=weight.dtype)  # noqa: A001
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape {weight.shape}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        last = input.shape[-1] if input.ndim else None
        raise ValueError(
            f"linear: input's last dim must equal in_features={weight.shape[1]}, got {last} (input shape {input.shape})"
        )
    check_same_dtype(input, weight, "weight", "linear")
    if bias is not None:
        check_tensor(bias, "bias", "linear")
        if bias.shape != (weight.shape[0],):
            raise ValueError(f"linear: bias must have shape ({weight.shape[0]},), got {bias.shape}")
        check_same_dtype(input, bias, "bias", "linear")
    return nn_ops.Linear.apply(input, weight, bias)
