"""minitensor: a small, readable tensor library with reverse-mode autograd.

>>> import minitensor as mt
>>> x = mt.randn(3, requires_grad=True)
>>> (x.exp() * x).sum().backward()
>>> x.grad.shape
(3,)
"""

# ruff: noqa: I001  (the order below is deliberate: malloc first, the Tensor, then the ops that give it methods)
import importlib
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
from .ops.functions import (  # noqa: A004  (PyTorch's names: abs, all, max, round ...)
    abs,
    absolute,
    acos,
    acosh,
    add,
    addcdiv,
    addcmul,
    all,
    allclose,
    amax,
    amin,
    aminmax,
    any,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bincount,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    block_diag,
    bmm,
    bucketize,
    cartesian_prod,
    cat,
    cdist,
    ceil,
    chain_matmul,
    cholesky,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    clone,
    combinations,
    copysign,
    cos,
    cosh,
    count_nonzero,
    cross,
    cummax,
    cummin,
    cumprod,
    cumsum,
    deg2rad,
    det,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    diff,
    digamma,
    div,
    divide,
    dot,
    dsplit,
    einsum,
    eq,
    equal,
    erf,
    erfc,
    erfinv,
    exp,
    exp2,
    expm1,
    fix,
    flatten,
    flip,
    float_power,
    floor,
    floor_divide,
    fmod,
    frac,
    gather,
    ge,
    ger,
    greater,
    greater_equal,
    gt,
    heaviside,
    histc,
    histogram,
    hsplit,
    hypot,
    i0,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_select,
    inner,
    inverse,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    kron,
    kthvalue,
    le,
    lerp,
    less,
    less_equal,
    lgamma,
    log,
    log10,
    log1p,
    log2,
    log_softmax,
    logaddexp,
    logaddexp2,
    logcumsumexp,
    logdet,
    logical_and,
    logical_or,
    logical_xor,
    logit,
    logsumexp,
    lt,
    masked_scatter,
    masked_select,
    matmul,
    matrix_power,
    max,
    mean,
    median,
    meshgrid,
    min,
    mm,
    mode,
    moveaxis,
    movedim,
    msort,
    mul,
    multiply,
    nan_to_num,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    narrow,
    ne,
    neg,
    negative,
    norm,
    not_equal,
    outer,
    permute,
    pinverse,
    polygamma,
    pow,
    prod,
    qr,
    quantile,
    rad2deg,
    reciprocal,
    relu,
    remainder,
    repeat_interleave,
    reshape,
    roll,
    rot90,
    round,
    rsqrt,
    scatter,
    scatter_add,
    searchsorted,
    sgn,
    sigmoid,
    sign,
    signbit,
    sin,
    sinc,
    sinh,
    slogdet,
    softmax,
    softplus,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    std_mean,
    sub,
    subtract,
    sum,
    svd,
    swapaxes,
    swapdims,
    take,
    take_along_dim,
    tan,
    tanh,
    tensor_split,
    tensordot,
    topk,
    trace,
    transpose,
    tril,
    tril_indices,
    triu,
    triu_indices,
    true_divide,
    trunc,
    unbind,
    unflatten,
    unique,
    unique_consecutive,
    unsqueeze,
    var,
    var_mean,
    vdot,
    vsplit,
    where,
    xlogy,
)
from .kernels.runtime.jit import jit_disabled, jit_enabled, jit_waits, set_jit_enabled, set_jit_wait
from .kernels.runtime.threads import get_num_threads, set_num_threads, set_thread_policy, thread_policy_enabled
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .sampling import multinomial, randint, randint_like, randperm
from .type_info import finfo, iinfo
from .tensor.extras import is_floating_point, is_tensor, logical_not, nonzero, numel
from .tensor.types import BoolTensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor

# The rest of the API loads on first use (PEP 562, ``__getattr__`` below): ``mt.nn``, ``mt.optim``,
# ``mt.save`` ... work as always, and ``import minitensor`` does not pay for the code of layers,
# optimizers, distributions and transforms a program may never touch (a third of its import time).
_SUBPACKAGES = ("nn", "optim", "profiler", "testing", "utils", "distributions", "func", "serialization")
_FROM = {  # name -> the module that defines it
    "conv1d": "nn.functional",  # (torch.conv2d ...: F's)
    "conv2d": "nn.functional",
    "conv_transpose1d": "nn.functional",
    "conv_transpose2d": "nn.functional",
    "load": "utils.serialization",
    "save": "utils.serialization",
}


def __getattr__(name: str):
    """Load a subpackage (or one of the names in ``_FROM``) the first time it is asked for."""
    if name in _SUBPACKAGES:
        if name == "serialization":
            # ``minitensor.serialization`` (PyTorch's ``torch.serialization``) is a public module path; the
            # package lives in utils/ because saving whole modules needs nn, a floor above the tensor core.
            module = importlib.import_module(f"{__name__}.utils.serialization")
            sys.modules[f"{__name__}.serialization"] = module
        else:
            module = importlib.import_module(f"{__name__}.{name}")
    elif name in _FROM:
        module = getattr(importlib.import_module(f"{__name__}.{_FROM[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = module  # (later lookups find it directly)
    return module


def __dir__() -> list:
    return sorted(set(globals()) | set(_SUBPACKAGES) | set(_FROM))


newaxis = None  # x[:, mt.newaxis] adds a dim, as x[:, None]

__version__ = "0.1.0"
