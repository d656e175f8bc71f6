"""The im2col + GEMM kernels of ``conv.py``, image by image, on one thread or on several.

Each pass runs over a range of images ``[start, stop)``; for each image, its columns (im2col, into a
scratch of one image's size, reused for every image of the range: it stays in the cache) and one
BLAS product per group (``blas.gemm`` on 2-D views, no copies).  The columns are copied from the
image's zero-padded phases (``phases.py``: each kernel position reads its phase at one fixed shift
from the output pixel), output row by output row, without a test for the padding per pixel (2-3x
faster than copying each window row with its edges; a copy of the whole pitched run would be
faster still, but would add the pitch's extra columns to every product: 36 % for LeNet-5's c3):

- forward: ``y[n, g] = W[g] @ cols[g]`` (+ bias);
- input gradient: ``dcols[g] = W[g]ᵀ @ dy[n, g]``, then col2im of dcols into dx[n];
- weight gradient: ``dW[g] += dy[n, g] · cols[g]ᵀ``, accumulated over the range's images by the
  product itself (``beta = 1``).  Both operands are read along their rows (the sum runs over the
  pixels), the shape ``dot_tiles`` is made for: 1.2-1.7x BLAS's per-image calls.  Where its tiles
  do not pay (``dot_tiles.pays``: fewer than 128 pixels, columns too large for the cache) BLAS runs
  it, as ``dW[g]ᵀ += cols[g] @ dy[n, g]ᵀ`` (~12 % faster in OpenBLAS than ``dy @ colsᵀ``),
  transposed into dW at the end.

Where ``_direct`` finds that the products pay for the copies, an image's forward and its stride-1
input gradient run on ``conv_direct`` instead (the image channels last, its windows as rows, their
products on ``dot_tiles``).

A 1x1 kernel with stride 1 and no padding takes the image itself as its columns (no im2col).

On one thread (``forward`` ...), a pass runs over every image, and BLAS splits each product over
its own threads.  With several images and threads (``forward_threaded`` ...), the images are split
instead: each thread runs the range kernel on its share, with single-threaded products, so that the
im2col and col2im copies run in parallel too.  The threads are NumPy's BLAS threads
(``runtime/blas_threads.py``: each share is a numba ``cfunc`` task, no second thread pool competes
with BLAS's), or numba's where BLAS's cannot take tasks.  The weight gradient's shares each sum
their images into a partial gradient of their own, added up at the end.
"""

from __future__ import annotations

import functools

import numpy as np

from . import conv_direct, dot_tiles
from ._strided import copy_run, scatter_add
from .im2col import as_record, from_record
from .phases import flat, from_phases, phase_scratch, tap, to_phases
from .runtime import blas, blas_threads
from .runtime.blas import gemm
from .runtime.blas_threads import HEAD, SLOT, contiguous, fail, record, records, split
from .runtime.jit import njit, prange

MACS_PER_SECOND = 50e9  # one thread's GEMM, for the choice of the threaded kernels (2-core VM: 55-60e9)
NS_PER_OUTPUT = 0.36  # what a product's output value costs beyond its multiply-adds (few sums: far below peak)
NS_PER_COLUMN_VALUE = 0.1  # what copying a value into the im2col columns costs


def serial_seconds(macs: int, outputs: int, columns: int) -> float:
    """What a pass of ``macs`` multiply-adds into ``outputs`` values, through ``columns`` im2col
    values, takes on one thread, about (fitted on the Intel VM, one thread: 1 -> 6 channels 5x5 on
    28 x 28 at batch 64 378 µs, 1 -> 32 3x3 905, 1 -> 16 3x3 at 32 x 32 and batch 32 300; the
    multiply-adds alone would say 150, 289 and 94)."""
    return macs / MACS_PER_SECOND + 1e-9 * (outputs * NS_PER_OUTPUT + columns * NS_PER_COLUMN_VALUE)


# ------------------------------------------------------------------ one range of images
@njit(inline="always")
def is_pointwise(win, h: int, w: int) -> bool:
    """A 1x1 kernel, stride 1, no padding: the image itself is its columns."""
    return win.kh == 1 and win.kw == 1 and win.sh == 1 and win.sw == 1 and win.oh == h and win.ow == w


@njit
def _phases(planes, win, needed: bool = True):
    """The phase scratch (C, sh, sw, Hq, P) of one image of the (N, C, H, W) ``planes`` (empty for a
    pointwise convolution, which needs no columns, and where not ``needed``)."""
    n, c, h, w = planes.shape
    return phase_scratch(h, w, win, c if needed and not is_pointwise(win, h, w) else 0, planes)


@njit
def columns(x, win, phases, cols):
    """im2col of one image x (C, H, W) into cols (C * kh * kw, L), through its phases: row (c, i, j),
    output row p is the run of ow pixels of channel c's phase that kernel position (i, j) reads."""
    k, pitch, ow = win.kh * win.kw, phases.shape[4], win.ow
    for c in range(x.shape[0]):
        to_phases(x[c], win, phases[c])
        source = flat(phases[c])
        for i in range(win.kh):
            for j in range(win.kw):
                row, shift = tap(win, pitch, i, j)
                target = cols[c * k + i * win.kw + j]
                for p in range(win.oh):
                    copy_run(target, p * ow, source[row], shift + p * pitch, ow)


@njit
def col2im(cols, win, phases, x):
    """The adjoint of ``columns``: x (C, H, W) = the columns summed back onto the pixels they were
    copied from."""
    k, pitch, ow = win.kh * win.kw, phases.shape[4], win.ow
    for c in range(x.shape[0]):
        phases[c] = 0
        target = flat(phases[c])
        for i in range(win.kh):
            for j in range(win.kw):
                row, shift = tap(win, pitch, i, j)
                source = cols[c * k + i * win.kw + j]
                for p in range(win.oh):
                    scatter_add(target[row], shift + p * pitch, 1, source, p * ow, ow)
        from_phases(phases[c], win, x[c])


@njit(inline="always")
def _direct(channels: int, outputs: int, pixels: int, image_pixels: int, win, groups: int, weight) -> bool:
    """True where a pass takes ``conv_direct`` (its own convolution: ``channels`` input channels of
    ``image_pixels`` pixels, ``outputs`` output channels of ``pixels`` pixels): one group, a window
    larger than 1x1, sums and weight rows ``dot_tiles`` pays for, and enough products to pay for
    the copies (measured on the 2-core VM, ResNet and LeNet layers, both passes):

    - the window rows cost 2x the im2col columns: with 16 output channels to share each row BLAS's
      path is as fast, from 32 on the tiles are 25-40 % faster; below 64 pixels an image, BLAS's
      products of so few columns run at half its speed, and 16 channels suffice (2x);
    - the image laid out channels last costs a pass over the input: with a stride of 2 and 32
      output channels (72 multiply-adds per input value) it is 20 % slower, from 144 faster.
    """
    sums = channels * win.kh * win.kw
    if groups != 1 or win.kh * win.kw == 1 or not dot_tiles.pays(sums, weight.size * weight.itemsize):
        return False
    per_value = outputs * win.kh * win.kw * pixels / image_pixels
    return (outputs >= 32 or pixels < 64) and per_value >= 128


@njit(inline="always")
def direct_forward(h: int, w: int, win, groups: int, weight) -> bool:
    """True where the forward of (C, h, w) images takes ``conv_direct``."""
    co, c = weight.shape[0], weight.shape[1] * groups
    return _direct(c, co, win.oh * win.ow, h * w, win, groups, weight)


@njit(inline="always")
def direct_input_grad(h: int, w: int, win, groups: int, weight) -> bool:
    """True where the input gradient of (C, h, w) images takes ``conv_direct``: a stride of 1, the
    transposed padding >= 0 (``conv_direct.input_grad_window``), and ``_direct``."""
    co, c = weight.shape[0], weight.shape[1] * groups
    transposed = conv_direct.input_grad_window(win, h, w)
    if win.sh != 1 or win.sw != 1 or transposed.pt < 0 or transposed.pl < 0:
        return False
    return _direct(co, c, h * w, win.oh * win.ow, win, groups, weight)


@njit
def _forward_images(x, weight, bias, win, groups, out, start, stop):
    n, c, h, w = x.shape
    co = weight.shape[0]
    cog, ckg, length = co // groups, (c // groups) * win.kh * win.kw, win.oh * win.ow
    wg = weight.reshape((groups, cog, ckg))
    pointwise = is_pointwise(win, h, w)
    direct = direct_forward(h, w, win, groups, weight)
    cols = np.empty((0 if pointwise or direct else c * win.kh * win.kw, length), x.dtype)
    phases = _phases(x, win, not direct)
    if direct:
        image, windows = conv_direct.scratch(h, w, c, win, x)
        rows_of_weight = conv_direct.weight_rows(weight)
    for i in range(start, stop):
        if direct:
            conv_direct.forward_image(x[i], rows_of_weight, win, image, windows, out[i].reshape((co, length)))
        elif pointwise:
            source = x[i].reshape((c, length))
        else:
            columns(x[i], win, phases, cols)
            source = cols
        if not direct:
            y = out[i].reshape((groups, cog, length))
            for g in range(groups):
                gemm(wg[g], False, source[g * ckg : (g + 1) * ckg], False, y[g], 0.0)
        if bias is not None:
            rows = out[i].reshape((co, length))
            for o in range(co):
                b, row = bias[o], rows[o]
                for j in range(length):  # (in place: ``rows[o] += b`` would also copy the row onto itself)
                    row[j] += b


@njit
def _input_grad_images(grad, weight, win, groups, out, start, stop):
    c, h, w = out.shape[1:]
    co = weight.shape[0]
    k = win.kh * win.kw
    cog, ckg, length = co // groups, (c // groups) * k, win.oh * win.ow
    wg = weight.reshape((groups, cog, ckg))
    pointwise = is_pointwise(win, h, w)
    direct = direct_input_grad(h, w, win, groups, weight)
    dcols = np.empty((0 if pointwise or direct else c * k, length), out.dtype)
    phases = _phases(out, win, not direct)
    if direct:
        transposed = conv_direct.input_grad_window(win, h, w)
        image, windows = conv_direct.scratch(win.oh, win.ow, co, transposed, grad)
        rows_of_weight = conv_direct.flipped_weight_rows(weight)
        for i in range(start, stop):
            conv_direct.forward_image(grad[i], rows_of_weight, transposed, image, windows, out[i].reshape((c, h * w)))
        return
    for i in range(start, stop):
        dy = grad[i].reshape((groups, cog, length))
        target = out[i].reshape((c, length)) if pointwise else dcols
        for g in range(groups):
            gemm(wg[g], True, dy[g], False, target[g * ckg : (g + 1) * ckg], 0.0)
        if not pointwise:
            col2im(dcols, win, phases, out[i])


@njit
def _weight_grad_images(x, grad, win, groups, out, start, stop):
    """out (Co, C/G, kh, kw) = the sum over the images of the range (0 for an empty range)."""
    n, c, h, w = x.shape
    co = grad.shape[1]
    cog, ckg, length = co // groups, (c // groups) * win.kh * win.kw, win.oh * win.ow
    pointwise = is_pointwise(win, h, w)
    cols = np.empty((0 if pointwise else c * win.kh * win.kw, length), x.dtype)
    phases = _phases(x, win)
    dw = out.reshape((groups, cog, ckg))
    tiles = dot_tiles.pays(length, ckg * length * x.itemsize)
    dw_t = np.zeros((0 if tiles else groups, ckg, cog), out.dtype)  # (BLAS: cols @ dyᵀ, ~12% faster than dy @ colsᵀ)
    if start == stop:
        dw[...] = 0
    for i in range(start, stop):
        if pointwise:
            source = x[i].reshape((c, length))
        else:
            columns(x[i], win, phases, cols)
            source = cols
        dy = grad[i].reshape((groups, cog, length))
        beta = 0.0 if i == start else 1.0
        for g in range(groups):
            if tiles:
                dot_tiles.dot_rows(dy[g], source[g * ckg : (g + 1) * ckg], dw[g], beta)
            else:
                gemm(source[g * ckg : (g + 1) * ckg], False, dy[g], True, dw_t[g], beta)
    if not tiles and start < stop:
        for g in range(groups):
            source, target = dw_t[g], dw[g]
            for o in range(cog):
                for q in range(ckg):
                    target[o, q] = source[q, o]


# ------------------------------------------------------------------ every image, one thread
@njit
def forward(x, weight, bias, win, groups, out):
    _forward_images(x, weight, bias, win, groups, out, 0, x.shape[0])


@njit
def input_grad(grad, weight, win, groups, out):
    _input_grad_images(grad, weight, win, groups, out, 0, grad.shape[0])


@njit
def weight_grad(x, grad, win, groups, out):
    _weight_grad_images(x, grad, win, groups, out, 0, x.shape[0])


# ------------------------------------------------------------------ the images split over the threads
def forward_threaded(x, weight, bias, win, groups, out) -> None:
    count = blas_threads.shares(x.shape[0])
    if count == 1:
        return forward(x, weight, bias, win, groups, out)
    if not blas_threads.available():
        with blas.single_threaded():
            return _forward_parallel(x, weight, bias, win, groups, out, count)
    row = None if bias is None else np.ascontiguousarray(bias).reshape(1, 1, 1, -1)
    arrays = (x, weight, row, out, as_record(win, groups))
    blas_threads.run(_forward_task(x.dtype.type, bias is not None), records(split(x.shape[0], count), arrays))


def input_grad_threaded(grad, weight, win, groups, out) -> None:
    count = blas_threads.shares(grad.shape[0])
    if count == 1:
        return input_grad(grad, weight, win, groups, out)
    if not blas_threads.available():
        with blas.single_threaded():
            return _input_grad_parallel(grad, weight, win, groups, out, count)
    arrays = (grad, weight, out, as_record(win, groups))
    blas_threads.run(_input_grad_task(grad.dtype.type), records(split(grad.shape[0], count), arrays))


def weight_grad_threaded(x, grad, win, groups, out) -> None:
    count = blas_threads.shares(x.shape[0])
    if count == 1:
        return weight_grad(x, grad, win, groups, out)
    partial = np.empty((count,) + out.shape, out.dtype)
    if not blas_threads.available():
        with blas.single_threaded():
            _weight_grad_parallel(x, grad, win, groups, partial)
    else:
        arrays = (x, grad, partial.reshape(count, out.shape[0], out.shape[1], -1), as_record(win, groups))
        blas_threads.run(_weight_grad_task(x.dtype.type), records(split(x.shape[0], count), arrays))
    np.sum(partial, axis=0, out=out)


@njit(inline="always")
def _share(t: int, n: int, count: int) -> tuple:
    """Images [start, stop) of share t of ``count`` (``blas_threads.split``'s ranges)."""
    return n * t // count, n * (t + 1) // count


@njit(parallel=True)
def _forward_parallel(x, weight, bias, win, groups, out, count):
    for t in prange(count):
        start, stop = _share(t, x.shape[0], count)
        _forward_images(x, weight, bias, win, groups, out, start, stop)


@njit(parallel=True)
def _input_grad_parallel(grad, weight, win, groups, out, count):
    for t in prange(count):
        start, stop = _share(t, grad.shape[0], count)
        _input_grad_images(grad, weight, win, groups, out, start, stop)


@njit(parallel=True)
def _weight_grad_parallel(x, grad, win, groups, partial):
    count = partial.shape[0]
    for t in prange(count):
        start, stop = _share(t, x.shape[0], count)
        _weight_grad_images(x, grad, win, groups, partial[t], start, stop)


@functools.cache
def _forward_task(dtype, has_bias: bool):
    """The task running ``_forward_images`` on one record row: slots x, weight, bias, out, geometry."""

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 5)
        x, weight, out = contiguous(row, 0, dtype), contiguous(row, 1, dtype), contiguous(row, 3, dtype)
        bias = contiguous(row, 2, dtype)[0, 0, 0] if has_bias else None
        g = contiguous(row, 4, np.int64)[0, 0, 0]
        try:
            _forward_images(x, weight, bias, from_record(g), g[10], out, row[0], row[1])
        except Exception:  # (e.g. no memory for the scratch: reported by ``blas_threads.run``)
            fail(row)

    return blas_threads.cfunc(task)


@functools.cache
def _input_grad_task(dtype):
    """The task running ``_input_grad_images``: slots grad, weight, out, geometry."""

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 4)
        grad, weight, out = contiguous(row, 0, dtype), contiguous(row, 1, dtype), contiguous(row, 2, dtype)
        g = contiguous(row, 3, np.int64)[0, 0, 0]
        try:
            _input_grad_images(grad, weight, from_record(g), g[10], out, row[0], row[1])
        except Exception:
            fail(row)

    return blas_threads.cfunc(task)


@functools.cache
def _weight_grad_task(dtype):
    """The task running ``_weight_grad_images`` into its share's partial gradient: slots x, grad,
    the partials (count, Co, C/G, kh * kw), geometry."""

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 4)
        x, grad, partial = contiguous(row, 0, dtype), contiguous(row, 1, dtype), contiguous(row, 2, dtype)
        g = contiguous(row, 3, np.int64)[0, 0, 0]
        win = from_record(g)
        count, n = partial.shape[0], x.shape[0]
        t = 0
        while _share(t, n, count)[0] != row[0]:  # (which share this row is: its start says)
            t += 1
        mine = partial[t].reshape((partial.shape[1], partial.shape[2], win.kh, win.kw))
        try:
            _weight_grad_images(x, grad, win, g[10], mine, row[0], row[1])
        except Exception:
            fail(row)

    return blas_threads.cfunc(task)
