"""The plain NumPy attention the attention tests compare with."""

from __future__ import annotations

import math

import numpy as np


def reference_attention(q, k, v, mask=None, scale=None, keep=None):
    """softmax(q kᵀ * scale + mask) v in plain NumPy, rows with every key masked -> 0."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = s + mask
    out_p = np.zeros_like(s)
    for idx in np.ndindex(*s.shape[:-1]):
        row = s[idx]
        if np.isneginf(row).all():
            continue
        e = np.exp(row - row.max())
        out_p[idx] = e / e.sum()
    pd = out_p if keep is None else out_p * keep
    return pd @ v, out_p
