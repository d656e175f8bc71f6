"""``linear``: the affine map y = x @ W.T + b, one fused op (``ops.nn_ops.Linear``); ``bilinear``:
y = x1ᵀ W x2 + b for each output feature (one matrix product, then a product with x2 summed)."""

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


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1[..., :] @ weight[o] @ input2[..., :] + bias[o]``.

    Args:
        input1: (..., in1_features); input2: (..., in2_features), the same leading dims.
        weight: (out_features, in1_features, in2_features); bias: (out_features,) or None.

    >>> F.bilinear(mt.ones(2, 3), mt.ones(2, 4), mt.ones(5, 3, 4)).shape
    (2, 5)
    """
    check_tensor(weight, "weight", "bilinear")
    x1 = as_input(input1, "input1", "bilinear", like=weight.dtype)
    x2 = as_input(input2, "input2", "bilinear", like=weight.dtype)
    if weight.ndim != 3:
        raise ValueError(
            f"bilinear: weight must be 3-D (out_features, in1_features, in2_features), got shape {weight.shape}"
        )
    for name, x, size in (("input1", x1, weight.shape[1]), ("input2", x2, weight.shape[2])):
        if x.ndim == 0 or x.shape[-1] != size:
            raise ValueError(f"bilinear: {name}'s last dim must be {size} (weight {weight.shape}), got shape {x.shape}")
        check_same_dtype(x, weight, "weight", "bilinear")
    if x1.shape[:-1] != x2.shape[:-1]:
        raise ValueError(f"bilinear: input1 {x1.shape} and input2 {x2.shape} must have the same leading dims")
    if bias is not None:
        check_tensor(bias, "bias", "bilinear")
        if bias.shape != (weight.shape[0],):
            raise ValueError(f"bilinear: bias must have shape ({weight.shape[0]},), got {bias.shape}")
        check_same_dtype(x1, bias, "bias", "bilinear")
    out, in1, in2 = weight.shape
    # x1 @ W for all outputs at once: (N, in1) @ (in1, out * in2), then times x2, summed over in2.
    t = x1.reshape(-1, in1) @ weight.permute(1, 0, 2).reshape(in1, out * in2)
    y = (t.reshape(-1, out, in2) * x2.reshape(-1, 1, in2)).sum(-1).reshape(*x1.shape[:-1], out)
    return y if bias is None else y + bias
