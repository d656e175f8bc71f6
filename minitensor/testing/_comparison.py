"""``assert_close``: PyTorch's ``torch.testing.assert_close``, its default tolerances and its messages.

``actual`` and ``expected`` are compared pair by pair: nested sequences and mappings element by
element, then each pair by the first kind that takes it:

- ``None`` with ``None``;
- Python or NumPy bools, which must be equal;
- Python or NumPy numbers, close as numbers (int as int64, float as float64 for the tolerances);
- tensor-likes of directly related types (Tensor with Tensor, ndarray with ndarray), as tensors:
  same shape, device and (unless ``check_dtype=False``) dtype, then close elementwise.

Close means ``|actual - expected| <= atol + rtol * |expected|``; infinities must be equal, NaNs
fail unless ``equal_nan``.  When ``rtol``/``atol`` are omitted they come from the dtypes (the
loosest of the two inputs): float16 (1e-3, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7),
anything else (0, 0): equality.

>>> import minitensor as mt
>>> assert_close(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 2.0 + 1e-7]))
>>> try:
...     assert_close(mt.tensor([1.0, 2.0, 3.0]), mt.tensor([1.0, 2.5, 3.0]))
... except AssertionError as e:
...     print(e)
Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 3 (33.3%)
Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import cmath
import collections.abc
from collections.abc import Callable

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ..tensor.conversion import as_tensor

# {dtype: (rtol, atol)}, PyTorch's table.
_DTYPE_PRECISIONS = {dtypes.float16: (0.001, 1e-5), dtypes.float32: (1.3e-6, 1e-5), dtypes.float64: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """One failed pair: the exception type to raise, its message and where it is in the inputs."""

    def __init__(self, kind: type, msg: str, path: tuple = ()) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.path = kind, msg, path

    def to_error(self, msg: str | Callable[[str], str] | None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.path:
            text += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.path)}"
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This kind of pair does not take these inputs: try the next one."""


def default_tolerances(*dtype_list) -> tuple[float, float]:
    """The loosest (rtol, atol) of the dtypes (0, 0 for dtypes without an entry: equality)."""
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(np.dtype(d), (0.0, 0.0)) for d in dtype_list])
    return max(rtols), max(atols)


def _tolerances(dtype_list: list, rtol, atol) -> tuple[float, float]:
    return (rtol, atol) if rtol is not None else default_tolerances(*dtype_list)


def _mismatch_msg(identifier: str, extra: str | None, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    """PyTorch's numeric mismatch message (``_make_mismatch_msg``)."""
    equality = rtol == 0 and atol == 0

    def diff_msg(kind: str, diff, idx, tol) -> str:
        msg = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}"
        )
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _compare_none(actual, expected, path: tuple, **_) -> None:
    if actual is not None and expected is not None:
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)


def _compare_bools(actual, expected, path: tuple, **_) -> None:
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", path)


def _compare_numbers(actual, expected, path: tuple, rtol, atol, equal_nan: bool, **_) -> None:
    kinds = (int, float, complex, np.number)
    if not all(isinstance(x, kinds) and not isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    dtype_of = {int: dtypes.int64, float: dtypes.float64, complex: np.dtype(np.complex128)}
    rtol, atol = _tolerances([dtype_of[type(x)] for x in (actual, expected)], rtol, atol)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_mismatch_msg(actual, expected, rtol, atol), path)


def _scalar_mismatch_msg(actual, expected, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_msg("Scalars", extra, abs_diff, None, atol, rel_diff, None, rtol)


def _compare_tensors(actual, expected, path: tuple, rtol, atol, equal_nan: bool, check_dtype: bool, **_) -> None:
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or not all(isinstance(x, (Tensor, np.ndarray)) for x in (actual, expected)):
        raise _Unsupported
    a, e = as_tensor(actual).detach().numpy(), as_tensor(expected).detach().numpy()
    rtol, atol = _tolerances([a.dtype, e.dtype], rtol, atol)
    for name, x, y in (("shape", a.shape, e.shape), ("dtype", a.dtype, e.dtype)):
        if x != y and (name == "shape" or check_dtype):
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {x} != {y}.", path)
    if a.dtype != e.dtype:  # compared in the dtype both promote to
        common = dtypes.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_mismatch_msg(a.item(), e.item(), rtol, atol), path)
    raise _Mismatch(AssertionError, _tensor_mismatch_msg(a, e, matches, rtol, atol), path)


def _isclose(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """``torch.isclose``: equal values (infinities included) or within the tolerance; NaN only with ``equal_nan``."""
    if a.dtype.kind in "biu" and rtol == 0 and atol == 0:
        return a == e
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = (a64 == e64) | (np.isfinite(a64) & np.isfinite(e64) & (np.abs(a64 - e64) <= atol + rtol * np.abs(e64)))
    return close | (np.isnan(a64) & np.isnan(e64)) if equal_nan else close


def _tensor_mismatch_msg(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol: float, atol: float) -> str:
    """PyTorch's ``make_tensor_mismatch_msg``: the differences are computed in the inputs' dtype
    (integers in int64, their relative difference in the default float dtype), over the mismatches only."""
    shape, total = matches.shape, matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, matches = a.ravel(), e.ravel(), matches.ravel()
    if a.dtype.kind in "biu":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        rel_diff = abs_diff / np.abs(e)
    if a.dtype.kind == "i":
        rel_diff = rel_diff.astype(dtypes.get_default_dtype())
    rel_diff[matches] = 0
    abs_idx, rel_idx = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))  # a NaN counts as the greatest
    where = lambda i: tuple(int(k) for k in np.unravel_index(i, shape))  # noqa: E731
    return _mismatch_msg(
        "Tensor-likes", extra, abs_diff[abs_idx].item(), where(abs_idx), atol, rel_diff[rel_idx].item(),
        where(rel_idx), rtol,
    )  # fmt: skip


_PAIRS = (_compare_none, _compare_bools, _compare_numbers, _compare_tensors)


def _compare(actual, expected, path: tuple, options: dict) -> None:
    """Compare recursively (sequences by position, mappings by key); raise the first ``_Mismatch``."""
    is_sequence = lambda x: isinstance(x, collections.abc.Sequence) and not isinstance(x, str)  # noqa: E731
    if is_sequence(actual) and is_sequence(expected):
        if len(actual) != len(expected):
            msg = f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
            raise _Mismatch(AssertionError, msg, path)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, (*path, i), options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                f"Additional keys in the actual mapping: {sorted(set(actual) - set(expected))}",
                path,
            )
        keys = list(actual)
        try:
            keys = sorted(keys)
        except TypeError:
            pass
        for key in keys:
            _compare(actual[key], expected[key], (*path, key), options)
        return
    for pair in _PAIRS:
        try:
            pair(actual, expected, path, **options)
            return
        except _Unsupported:
            continue
    raise _Mismatch(
        TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.", path
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close (see the module docstring).

    Args:
        actual, expected: Tensors, NumPy arrays, numbers, bools, None, or sequences/mappings of them.
        rtol, atol: the tolerances; give both or neither (then the dtypes' defaults).
        equal_nan: NaN equals NaN.
        check_dtype: tensors must have the same dtype (otherwise both are promoted first).
        check_device, check_layout, check_stride, allow_subclasses: accepted (minitensor has one
            device, one layout, and compares values, not strides).
        msg: replaces the message (a str), or edits it (a callable taking the generated message).

    Raises:
        AssertionError: the values (or shapes, dtypes, lengths, keys) differ; the message is PyTorch's.
        TypeError: inputs no pair can compare (a Tensor with a list ...).
        ValueError: only one of ``rtol`` and ``atol`` given.
    """
    __tracebackhide__ = True
    if (rtol is None) ^ (atol is None):
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}."
        )
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_dtype": check_dtype}
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as mismatch:
        raise mismatch.to_error(msg) from None
