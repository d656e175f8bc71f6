"""No warnings for inf and nan: ``mt.tensor(1.0) / 0`` is ``inf``, silently, as in PyTorch.

NumPy warns when a float operation divides by zero, overflows or gives an invalid
result (``RuntimeWarning: divide by zero encountered in divide``), and under
``python -W error`` the warning becomes an exception.  PyTorch never warns: inf and
nan *are* the answer.  Wrapping every op in ``np.errstate`` would cost ~2.5 µs a call,
so instead this one warnings filter, added when minitensor is imported, ignores those
four NumPy messages when they come from minitensor's own modules.  Your own NumPy code
warns as before, and minitensor's other warnings are untouched.
"""

from __future__ import annotations

import warnings

warnings.filterwarnings(
    "ignore",
    message=r"(divide by zero|invalid value|overflow|underflow) encountered",
    category=RuntimeWarning,
    module=r"minitensor\.",
)
