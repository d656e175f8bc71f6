"""``minitensor.testing``, PyTorch's ``torch.testing``: ``assert_close`` and ``make_tensor``.

- ``_comparison.py``: ``assert_close`` (PyTorch's default tolerances per dtype and its messages);
- ``_creation.py``: ``make_tensor`` (random test tensors of any dtype, shape and layout).

>>> import minitensor as mt
>>> x = make_tensor(3, dtype=mt.float32, device="cpu")
>>> assert_close(x * 1.0, x)
"""

from __future__ import annotations

import warnings

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]


def assert_allclose(actual, expected, rtol: float | None = None, atol: float | None = None, equal_nan: bool = True,
                    msg: str = "") -> None:  # fmt: skip
    """Deprecated in PyTorch (since 1.12, with a FutureWarning): ``assert_close`` with looser defaults,
    (1e-4, 1e-5) for float32 and (1e-5, 1e-8) for float64, dtypes not checked, NaNs equal by default."""
    warnings.warn(
        "`assert_allclose()` is deprecated since PyTorch 1.12; use `assert_close()` instead",
        FutureWarning,
        stacklevel=2,
    )
    from ..tensor import Tensor
    from ..tensor.conversion import as_tensor

    actual = actual if isinstance(actual, Tensor) else as_tensor(actual)
    expected = expected if isinstance(expected, Tensor) else as_tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        loose = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
        rtol, atol = map(max, zip(*(loose.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected))))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)
