"""kernels/im2col.py: the numba im2col and col2im (serial and parallel) against their NumPy
references, on every kind of window (stride, dilation, padding, a grid that leaves the input's
end unread, asymmetric padding), and col2im as im2col's adjoint."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

from minitensor.kernels import im2col as K

# (H, W, Window(kh, kw, sh, sw, pt, pl, dh, dw, oh, ow))
WINDOWS = [
    (5, 6, K.Window(3, 3, 1, 1, 1, 1, 1, 1, 5, 6)),  # "same"
    (7, 9, K.Window(3, 2, 2, 3, 0, 1, 1, 2, 3, 3)),  # strided, dilated, the last columns unread
    (4, 4, K.Window(2, 2, 2, 2, 0, 0, 1, 1, 2, 2)),  # non-overlapping
    (1, 9, K.Window(1, 4, 1, 1, 0, 1, 1, 1, 1, 8)),  # 1-D, asymmetric padding (1 before, 2 after)
    (3, 3, K.Window(3, 3, 1, 1, 2, 2, 2, 2, 3, 3)),  # windows mostly in the padding
    (6, 5, K.Window(1, 1, 2, 1, 0, 0, 1, 1, 3, 5)),  # 1x1, strided rows
]


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize(("h", "w", "win"), WINDOWS)
def test_kernels_match_the_reference(kernel, rng, dtype, h, w, win) -> None:
    x = rng.standard_normal((2, 3, h, w)).astype(dtype)
    cols = rng.standard_normal((2, 3 * win.kh * win.kw, win.oh * win.ow)).astype(dtype)

    def run():
        return K.im2col(x, win), K.col2im(cols, (h, w), win)

    for got, expected in zip(jitted(run), reference(run)):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, expected, **tolerance(dtype))


@pytest.mark.parametrize(("h", "w", "win"), WINDOWS)
def test_col2im_is_the_adjoint_of_im2col(jit_path, rng, h, w, win) -> None:
    """<im2col(x), c> = <x, col2im(c)> for random x and c: col2im is the gradient of im2col."""
    x = rng.standard_normal((2, 3, h, w))
    cols = rng.standard_normal((2, 3 * win.kh * win.kw, win.oh * win.ow))
    np.testing.assert_allclose(np.sum(K.im2col(x, win) * cols), np.sum(x * K.col2im(cols, (h, w), win)), rtol=1e-12)


def test_windows_in_the_padding_read_zeros(jit_path) -> None:
    x = np.arange(1.0, 5.0).reshape(1, 1, 2, 2)
    cols = K.im2col(x, K.Window(2, 2, 1, 1, 1, 1, 1, 1, 3, 3))[0]
    assert cols[0].tolist() == [0, 0, 0, 0, 1, 2, 0, 3, 4]  # pixel (0, 0) of each window
    assert cols[3].tolist() == [1, 2, 0, 3, 4, 0, 0, 0, 0]  # pixel (1, 1)


def test_window_from_pairs() -> None:
    assert K.window((3, 1), (2, 1), (1, 0), (1, 1), (4, 5)) == K.Window(3, 1, 2, 1, 1, 0, 1, 1, 4, 5)
