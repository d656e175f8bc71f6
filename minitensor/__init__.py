"""minitensor: a small, readable tensor library with reverse-mode autograd.

>>> import minitensor as mt
>>> x = mt.randn(3, requires_grad=True)
>>> (x.exp() * x).sum().backward()
>>> x.grad.shape
(3,)
"""

from .tensor import Tensor  # noqa: I001  (Tensor first: the ops import it)
from . import autograd
from .autograd import (
    enable_grad,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .creation import arange, empty, eye, from_numpy, full, ones, ones_like, rand, randn, tensor, zeros, zeros_like
from .dtypes import bool, float32, float64, get_default_dtype, int64, set_default_dtype
from .functions import (
    abs,
    amax,
    amin,
    argmax,
    argmin,
    cat,
    clamp,
    exp,
    flatten,
    log,
    log_softmax,
    logsumexp,
    matmul,
    max,
    mean,
    min,
    permute,
    relu,
    reshape,
    sigmoid,
    softmax,
    sqrt,
    squeeze,
    stack,
    std,
    sum,
    tanh,
    transpose,
    unsqueeze,
    var,
    where,
)
from .kernels._jit import jit_disabled, jit_enabled, set_jit_enabled
from .random import manual_seed
from . import nn  # noqa: E402  (after the core: nn builds on it)
from . import optim
from . import profiler
from .serialization import load, save

__version__ = "0.1.0"
