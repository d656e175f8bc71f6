"""minitensor: a small, readable tensor library with reverse-mode autograd.

>>> import minitensor as mt
>>> x = mt.randn(3, requires_grad=True)
>>> (x.exp() * x).sum().backward()
>>> x.grad.shape
(3,)
"""

# ruff: noqa: I001  (the order below is deliberate: malloc first, the Tensor, then the ops that give it methods)
import sys
from math import e, inf, nan, pi

from .kernels.runtime import malloc as _malloc  # noqa: F401  (first: freed arrays kept for reuse, runtime/malloc.py)
from . import _silence  # noqa: F401  (NumPy's floating-point warnings from minitensor's code: nan and inf, as PyTorch)
from .tensor import Tensor
from . import ops  # (gives Tensor its methods that compute: ops/__init__.py)
from . import autograd
from .autograd import (
    enable_grad,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from . import linalg
from .ops.reorder import t
from ._device import device
from .tensor.creation import (
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from .tensor.conversion import as_tensor
from .tensor.printing import get_printoptions, printoptions, set_printoptions
from .tensor.ranges import linspace, logspace
from .dtypes import (
    bfloat16,
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from .ops.functions import (
    abs,
    log1p,
    expm1,
    log2,
    log10,
    exp2,
    rsqrt,
    square,
    reciprocal,
    neg,
    frac,
    sign,
    floor,
    ceil,
    round,
    trunc,
    add,
    all,
    allclose,
    any,
    bmm,
    chunk,
    clone,
    cos,
    cumsum,
    div,
    einsum,
    equal,
    flip,
    floor_divide,
    fmod,
    gather,
    index_add,
    index_fill,
    index_put,
    isclose,
    masked_scatter,
    mm,
    msort,
    mul,
    narrow,
    norm,
    pow,
    prod,
    roll,
    scatter,
    scatter_add,
    sin,
    softplus,
    sort,
    split,
    sub,
    topk,
    tril,
    triu,
    unbind,
    unique,
    amax,
    amin,
    argmax,
    argmin,
    argsort,
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
    remainder,
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
from .kernels.runtime.jit import jit_disabled, jit_enabled, jit_waits, set_jit_enabled, set_jit_wait
from .kernels.runtime.threads import get_num_threads, set_num_threads, set_thread_policy, thread_policy_enabled
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .sampling import multinomial, randint, randint_like, randperm
from .type_info import finfo, iinfo
from .tensor.extras import is_floating_point, is_tensor, logical_not, nonzero, numel
from .tensor.types import BoolTensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor
from . import nn
from . import optim
from . import profiler
from .autograd import profiler as _autograd_profiler  # noqa: F401  (torch.autograd.profiler: mt.autograd.profiler)
from . import testing
from . import utils
from . import distributions
from .utils import serialization
from .utils.serialization import load, save

# ``minitensor.serialization`` (PyTorch's ``torch.serialization``) is a public module path; the package lives
# in utils/ because saving whole modules needs nn, a floor above the tensor core.
sys.modules[f"{__name__}.serialization"] = serialization

newaxis = None  # x[:, mt.newaxis] adds a dim, as x[:, None]

__version__ = "0.1.0"
