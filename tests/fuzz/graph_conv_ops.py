"""The convolutions of the random graphs (``graph_ops.py`` has the other ops): conv1d, conv2d and their
transposes of a value with a fresh weight leaf, each beside a NumPy form written directly (a sum
over the kernel's positions of shifted, strided slices; nothing of minitensor's im2col).

``CONVS`` lists them.  An op's ``params(draw, a)`` draws the settings for operand ``a`` (groups,
stride, padding, dilation, output padding, kernel) and the shape of the weight leaf to add, under
the key ``weight_shape`` (``random_graphs`` adds the leaf and drops the key).  A value of 2 or 3 dims
suits conv1d (unbatched (C, L) or batched (N, C, L)), one of 3 or 4 dims conv2d.
"""

from __future__ import annotations

import itertools

import numpy as np
from graph_ops import Op
from hypothesis import strategies as st

import minitensor.nn.functional as F


def _batched(a: np.ndarray, dims: int) -> np.ndarray:
    return a if a.ndim == dims + 2 else a[None]


def _np_conv(x, w, stride, padding, dilation, groups, dims: int):
    """out[n, o, p] = sum over the kernel positions k and the group's channels c of
    w[o, c, k] * x_padded[n, c, p * stride + k * dilation]."""
    xb = _batched(x, dims)
    xp = np.pad(xb, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    kernel = w.shape[2:]
    grid = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(xp.shape[2:], kernel, stride, dilation)]
    out = np.zeros((xb.shape[0], w.shape[0], *grid))
    cin, cout = w.shape[1], w.shape[0] // groups
    for g in range(groups):
        wg, xg = w[g * cout : (g + 1) * cout], xp[:, g * cin : (g + 1) * cin]
        for k in itertools.product(*(range(n) for n in kernel)):
            key = tuple(slice(i * d, i * d + (m - 1) * s + 1, s) for i, d, m, s in zip(k, dilation, grid, stride))
            out[:, g * cout : (g + 1) * cout] += np.einsum(
                "oc,nc...->no...", wg[(slice(None),) * 2 + k], xg[(...,) + key]
            )
    return out if x.ndim == dims + 2 else out[0]


def _np_conv_transpose(x, w, stride, padding, output_padding, dilation, groups, dims: int):
    """Each input pixel spreads w times itself over its window of the output (the adjoint of _np_conv),
    then ``padding`` is cut from both sides (output_padding added at the end)."""
    xb = _batched(x, dims)
    kernel, grid = w.shape[2:], xb.shape[2:]
    full = [(m - 1) * s + d * (k - 1) + 1 + o for m, s, d, k, o in zip(grid, stride, dilation, kernel, output_padding)]
    cin, cout = w.shape[0] // groups, w.shape[1]
    out = np.zeros((xb.shape[0], cout * groups, *full))
    for g in range(groups):
        wg, xg = w[g * cin : (g + 1) * cin], xb[:, g * cin : (g + 1) * cin]
        for k in itertools.product(*(range(n) for n in kernel)):
            key = tuple(slice(i * d, i * d + (m - 1) * s + 1, s) for i, d, m, s in zip(k, dilation, grid, stride))
            part = np.einsum("co,nc...->no...", wg[(slice(None),) * 2 + k], xg)
            out[(slice(None), slice(g * cout, (g + 1) * cout)) + key] += part
    crop = tuple(slice(p, n - p) for p, n in zip(padding, full))
    out = out[(slice(None), slice(None)) + crop]
    return out if x.ndim == dims + 2 else out[0]


def _params(dims: int, transposed: bool):
    def params(draw, a) -> dict:
        channels, spatial = a.shape[-dims - 1], a.shape[-dims:]
        groups = draw(st.sampled_from([1, channels] if channels > 1 else [1]))
        out_channels = groups * draw(st.integers(1, 2))
        stride = tuple(draw(st.integers(1, 2)) for _ in range(dims))
        dilation = tuple(draw(st.integers(1, 2)) for _ in range(dims))
        padding = tuple(draw(st.integers(0, 1)) for _ in range(dims))
        kernel = []
        for n, p, d in zip(spatial, padding, dilation):
            largest = (n + 2 * p - 1) // d + 1 if not transposed else 3  # (the dilated kernel fits the padded input)
            kernel.append(draw(st.integers(1, min(3, largest))))
        settings = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
        if transposed:
            settings["output_padding"] = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
            shape = (channels, out_channels // groups, *kernel)
            sizes = zip(spatial, stride, padding, dilation, kernel, settings["output_padding"])
            if any((m - 1) * s - 2 * p + d * (k - 1) + o + 1 < 1 for m, s, p, d, k, o in sizes):
                settings["padding"] = (0,) * dims  # (no output left: no padding instead)
        else:
            shape = (out_channels, channels // groups, *kernel)
        return {**settings, "weight_shape": shape}

    return params


def _conv_op(dims: int, transposed: bool) -> Op:
    name = f"conv{'_transpose' if transposed else ''}{dims}d"
    fn = getattr(F, name)

    def reference(x, w, **s):
        if transposed:
            return _np_conv_transpose(
                x, w, s["stride"], s["padding"], s["output_padding"], s["dilation"], s["groups"], dims
            )
        return _np_conv(x, w, s["stride"], s["padding"], s["dilation"], s["groups"], dims)

    return Op(
        name,
        2,
        lambda x, w, **s: fn(x, w, **s),
        reference,
        lambda x, w, **s: f"F.{name}({x}, {w}, " + ", ".join(f"{k}={v}" for k, v in s.items()) + ")",
        ok=lambda a: a.ndim in (dims + 1, dims + 2) and a.size > 0,
        params=_params(dims, transposed),
    )


CONVS = [_conv_op(1, False), _conv_op(2, False), _conv_op(1, True), _conv_op(2, True)]
