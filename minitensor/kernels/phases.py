"""A padded image plane split into stride *phases*, and the *pitched* layout of an output plane:
what lets every kernel position of a convolution be one long loop (or one long copy) over a plane.

Output pixel (p, q) of a convolution reads, at kernel position (i, j), the zero-padded input at
(p * sh + i * dh, q * sw + j * dw).  Split the padded plane into sh * sw phases, phase (a, b)
holding the padded pixels (r * sh + a, c * sw + b): that pixel is in phase
((i * dh) % sh, (j * dw) % sw), at (p + i * dh // sh, q + j * dw // sw).  Every phase has the same
row pitch P; lay an output plane out with that pitch too (pixel (p, q) at flat index k = p * P + q,
columns q >= ow unused), and kernel position (i, j) reads its phase at k + ``shift``, the same
shift for every pixel: one contiguous run of ``span`` = (oh - 1) * P + ow elements.  With stride 1
there is one phase, the padded plane itself::

    padded plane (P = 6)      output, pitched: k = p * P + q
    0 0 0 0 0 0               y[k] += w[i, j] * xp[k + i * P + j]   for every (i, j),
    0 a b c d 0                      k over [0, (oh - 1) * P + ow)
    0 e f g h 0
    0 0 0 0 0 0

``to_phases`` copies a plane into its phases (the padding, written by no one, stays 0 in a zeroed
scratch), ``from_phases`` copies it back out; ``pitch`` and ``unpitch`` move an (oh, ow) plane into
and out of the pitched layout.  ``conv_depthwise.py`` sums the kernel positions straight into a
pitched output (one loop of ``span`` elements per kernel position; the columns q >= ow computed are
thrown away, and a pitched gradient has zeros there, so that they add nothing); ``conv_gemm.py``
copies, per kernel position and output row, the run of ow pixels it reads into the im2col columns,
without a test for the padding per pixel.
"""

from __future__ import annotations

import numpy as np

from ._strided import gather, scatter
from .runtime.jit import njit


@njit
def phase_scratch(h: int, w: int, win, count: int, like):
    """A zeroed (count, sh, sw, Hq, P) scratch of ``like``'s dtype for the phases of ``count``
    padded (h, w) planes, big enough for every window of ``win``."""
    hp = max(win.pt + h, (win.oh - 1) * win.sh + (win.kh - 1) * win.dh + 1)
    wp = max(win.pl + w, (win.ow - 1) * win.sw + (win.kw - 1) * win.dw + 1)
    shape = (count, win.sh, win.sw, (hp + win.sh - 1) // win.sh, (wp + win.sw - 1) // win.sw)
    return np.zeros(shape, like.dtype)


@njit(inline="always")
def flat(phases):
    """One plane's phases (sh, sw, Hq, P) as (sh * sw, Hq * P) rows: phase (a, b) is row a * sw + b."""
    return phases.reshape((phases.shape[0] * phases.shape[1], phases.shape[2] * phases.shape[3]))


@njit(inline="always")
def span(win, pitch: int) -> int:
    """The flat length of a pitched (oh, ow) plane."""
    return (win.oh - 1) * pitch + win.ow


@njit(inline="always")
def tap(win, pitch: int, i: int, j: int) -> tuple:
    """Kernel position (i, j): the row of its phase in ``flat`` and its shift from an output pixel's
    flat index."""
    a, b = (i * win.dh) % win.sh, (j * win.dw) % win.sw
    return a * win.sw + b, (i * win.dh) // win.sh * pitch + (j * win.dw) // win.sw


@njit(inline="always")
def _phase_start(phase: int, stride: int, before: int, size: int) -> tuple:
    """The input positions of one phase of a dim: ``first, first + stride, ...`` (``count`` of them),
    at positions ``start, start + 1, ...`` of the phase."""
    first = (phase - before) % stride
    return first, (first + before) // stride, max(0, (size - first + stride - 1) // stride)


@njit
def to_phases(x, win, phases) -> None:
    """The plane x (H, W) into its phases (sh, sw, Hq, P) (their padding is left as it is: 0)."""
    for a in range(win.sh):
        r0, t0, rows = _phase_start(a, win.sh, win.pt, x.shape[0])
        for b in range(win.sw):
            c0, u0, n = _phase_start(b, win.sw, win.pl, x.shape[1])
            for k in range(rows):
                gather(phases[a, b, t0 + k], u0, x[r0 + k * win.sh], c0, win.sw, n)


@njit
def from_phases(phases, win, x) -> None:
    """The inverse of ``to_phases``: x (H, W) = the input's pixels of the phases."""
    for a in range(win.sh):
        r0, t0, rows = _phase_start(a, win.sh, win.pt, x.shape[0])
        for b in range(win.sw):
            c0, u0, n = _phase_start(b, win.sw, win.pl, x.shape[1])
            for k in range(rows):
                scatter(x[r0 + k * win.sh], c0, win.sw, phases[a, b, t0 + k], u0, n)


@njit
def pitch(plane, pitch: int, row) -> None:
    """The (oh, ow) plane into the flat pitched ``row`` (its columns q >= ow are left as they are)."""
    for p in range(plane.shape[0]):
        gather(row, p * pitch, plane[p], 0, 1, plane.shape[1])


@njit
def unpitch(row, pitch: int, plane) -> None:
    """The inverse of ``pitch``: plane (oh, ow) = the pixels of the flat pitched ``row``."""
    for p in range(plane.shape[0]):
        gather(plane[p], 0, row, p * pitch, 1, plane.shape[1])
