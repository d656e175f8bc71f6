"""The wall between the teaching core and the array backend: every array function, by name.

Above this module, the Tensor, the autograd engine, the ops and the optimizers say *what* to
compute, by name: ``backend.softmax(x, dim)``, ``backend.exp(x)``, ``backend.sum_to_shape(grad,
shape)``, ``backend.adam_apply(...)``.  Below it, ``kernels/`` says *how*: each function is a numba
kernel beside its NumPy reference (same signature, the tests hold the two equal), and
``kernels/runtime/dispatch.py`` picks one per call: the reference when the JIT is off
(``MINITENSOR_DISABLE_JIT=1`` or ``mt.set_jit_enabled(False)`` switch every kernel to it), for
dtypes other than float32/float64 and for empty arrays; the parallel version for inputs big
enough to pay for the threads the thread policy allows; else the serial one.  An op never
chooses numba or NumPy itself, and nothing above this module imports ``kernels/``.

Every function takes and returns NumPy arrays.  Each is a kernel module's own function, named here
(no wrapper: calling through the wall costs nothing).  By family:

- the engine: ``sum_to_shape``, ``owned``, ``copy``, ``adapt_threads``; bias gradients: ``column_sums``; the
  backward of a reduction: ``expand``; a C-order copy (a transposed gradient by BLAS): ``contiguous``;
- elementwise: ``exp``, ``log``, ``log2``, ``log10``, ``exp2``, ``expm1``, ``log1p``, ``sin``, ``cos``,
  ``tan``, ``asin``, ``acos``, ``atan``, ``atan2``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh``,
  ``tanh``, ``erf``, ``sigmoid``, ``relu``, ``silu``, ``gelu``, ``softplus`` and the backward passes that
  need more than a product (``tanh_backward``, ...); the special functions ``erfc``, ``erfinv``, ``logit``,
  ``logaddexp``, ``lgamma``, ``polygamma``, ``i0``, ``i1`` (and ``erf_backward``, ...);
- along one dim (the dim moved last, rows of a C-contiguous array): ``softmax``, ``log_softmax``,
  ``logsumexp`` and their backward passes, ``amax``, ``amin``, ``reduce_product``, ``cumsum``, ``cumprod``,
  ``logcumsumexp``, ``layer_norm``, ``rms_norm``, ``topk_indices``; the rows layout itself (``as_rows``,
  ``from_rows``) for the ops that keep rows;
- indexing and selection: ``gather``, ``scatter``, ``scatter_add``, ``index_add``, ``add_picked_rows``, ``where``,
  ``flip``, ``triangle``; triangular systems: ``solve_triangular``; stacks of small matrices by LU: ``det``,
  ``slogdet``, ``solve``, ``inv``;
- losses: ``bce``, ``bce_logits``, ``kl_div``, ``robust_loss``, ``target_losses`` (cross-entropy), the CTC
  recursions (``ctc_alpha``, ``ctc_gradient``);
- products: ``matmul``, ``rows_product`` (a linear layer's ``x @ Wᵀ``), convolution (``conv2d``
  and its two gradients over the windows of ``conv_window``; ``im2col``, ``col2im``), attention
  (``attention_forward``, ``heads_forward``, ...), the recurrent layers (``lstm_forward``,
  ``gru_forward``, ...) and the feed-forward block's fused bias, activation and dropout
  (``bias_relu_dropout``, ``bias_gelu_dropout``);
- optimizers: ``adam_settings``, ``adam_apply``; distances and vector products: ``pdist_forward``,
  ``pdist_backward``, ``cdist_forward``, ``cdist_backward``, ``cross``;
- vision: pooling windows (``max_pool``, ``window_mean`` and its transpose), batch norm
  (``batch_norm_stats``, ``batch_norm_forward``, ``batch_norm_backward``, ``channel_affine``), group
  norm (``group_norm_forward``, ``group_norm_backward``) and
  resampling by sparse maps (``resample`` and its transpose: interpolation, padding modes), constant
  padding of the last two dims (``pad_planes`` and its gradient ``crop_planes``).

>>> x = np.array([[1.0, 2.0, 3.0]])
>>> softmax(x, -1).round(4)
array([[0.09  , 0.2447, 0.6652]])
>>> sum_to_shape(np.ones((4, 3)), (3,))
array([4., 4., 4.])
"""

from __future__ import annotations

from .kernels import activation as _activation
from .kernels import adam as _adam
from .kernels import along_dim as _along_dim
from .kernels import attention as _attention
from .kernels import attention_softmax as _attention_softmax
from .kernels import batch_norm as _batch_norm
from .kernels import bce as _bce
from .kernels import bessel as _bessel
from .kernels import cdist as _cdist
from .kernels import class_targets as _class_targets
from .kernels import column_sums as _column_sums
from .kernels import constant_pad as _constant_pad
from .kernels import conv as _conv
from .kernels import cross as _cross
from .kernels import ctc as _ctc
from .kernels import cumsum as _cumsum
from .kernels import divergence as _divergence
from .kernels import dot_tiles as _dot_tiles
from .kernels import elu as _elu
from .kernels import erf as _erf
from .kernels import erfinv as _erfinv
from .kernels import exp2 as _exp2
from .kernels import exp_log as _exp_log
from .kernels import expand as _expand
from .kernels import expm1 as _expm1
from .kernels import extremum as _extremum
from .kernels import flip as _flip
from .kernels import gamma as _gamma
from .kernels import gelu as _gelu
from .kernels import glu as _glu
from .kernels import group_norm as _group_norm
from .kernels import gru as _gru
from .kernels import hyperbolic as _hyperbolic
from .kernels import hypot as _hypot
from .kernels import im2col as _im2col
from .kernels import inverse_trig as _inverse_trig
from .kernels import layer_norm as _layer_norm
from .kernels import log1p as _log1p
from .kernels import logaddexp as _logaddexp
from .kernels import logit as _logit
from .kernels import lstm as _lstm
from .kernels import lu as _lu
from .kernels import matmul as _matmul
from .kernels import modulo as _modulo
from .kernels import pdist as _pdist
from .kernels import piecewise as _piecewise
from .kernels import pointwise as _pointwise
from .kernels import pool as _pool
from .kernels import product as _product
from .kernels import resample as _resample
from .kernels import rms_norm as _rms_norm
from .kernels import robust_loss as _robust_loss
from .kernels import running_extremum as _running_extremum
from .kernels import scaled as _scaled
from .kernels import scatter as _scatter
from .kernels import softmax as _softmax
from .kernels import softplus as _softplus
from .kernels import tanh as _tanh
from .kernels import topk as _topk
from .kernels import total as _total
from .kernels import triangle as _triangle
from .kernels import triangular_solve as _triangular_solve
from .kernels import trig as _trig
from .kernels import where as _where
from .kernels import window_mean as _window_mean
from .kernels.runtime import dispatch as _dispatch
from .kernels.runtime import malloc as _malloc
from .kernels.runtime import threads as _threads
from .kernels.runtime import transpose as _transpose

# ------------------------------------------------------------------ the autograd engine
sum_to_shape = _column_sums.sum_to_shape  # (grad, shape): a broadcast gradient summed back to its input's shape
expand = _expand.expand  # (grad, shape): a reduction's gradient broadcast back to its input's shape
broadcast = _expand.broadcast  # (x, shape): np.broadcast_to's read-only view, made directly
owned = _malloc.owned  # (array, like, holders): may a leaf keep this gradient without a copy?
copy = _expand.copy  # (grad, dtype): the copy a leaf keeps otherwise (one value throughout: a kernel fills it)
column_sums = _column_sums.column_sums  # (M, N) -> (N,): the sums of the rows (a bias's gradient)
contiguous = _transpose.contiguous  # np.ascontiguousarray; a gradient stored transposed copied by BLAS (5x)
# Before a pass of BLAS products (a backward pass, a layer's forward): the thread count follows the
# machine's load, read at most every 0.1 s, so that BLAS and the parallel kernels use only the free
# cores (the thread policy, ``kernels/runtime/threads.py``; the count it returns is not needed here).
adapt_threads = _threads.threads


# ------------------------------------------------------------------ elementwise
multiply = _scaled.multiply  # a * b; an array by one value per row or per column in one pass (norm, vecdot backward)
exp = _exp_log.exp  # e ** x (NumPy's exp for other than floats)
log = _exp_log.log  # ln x; log 0 = -inf, negative numbers NaN, silently (as PyTorch)
log2 = _exp_log.log2  # exact on powers of two
log10 = _exp_log.log10  # exact on powers of ten
exp2 = _exp2.exp2  # 2 ** x, exact on integers
expm1 = _expm1.expm1  # e ** x - 1, precise near 0
log1p = _log1p.log1p  # ln(1 + x), precise near 0
sin = _trig.sin  # the kernel for float32, NumPy's for float64
cos = _trig.cos  # the kernel for float32, NumPy's for float64
tan = _trig.tan  # the kernel for float32, NumPy's for float64
asin = _inverse_trig.asin  # likewise (NaN outside [-1, 1], silently)
acos = _inverse_trig.acos  # likewise
atan = _inverse_trig.atan  # likewise
atan2 = _inverse_trig.atan2  # (y, x), broadcast: the kernel for two float32 arrays
sinh = _hyperbolic.sinh  # the hyperbolic sine (NumPy's AVX-512 loop where it has one)
cosh = _hyperbolic.cosh  # the hyperbolic cosine (likewise)
asinh = _hyperbolic.asinh  # the inverse hyperbolic sine (NumPy's AVX-512 loop where it has one)
acosh = _hyperbolic.acosh  # the inverse hyperbolic cosine: NaN below 1 (likewise)
atanh = _hyperbolic.atanh  # the inverse hyperbolic tangent: ±inf at ±1, NaN beyond (likewise)
tanh = _tanh.tanh  # (NumPy's tanh for other than floats)
tanh_backward = _tanh.tanh_backward  # (grad, y): grad * (1 - y^2) from the output y
erf = _erf.erf  # the error function (Cody's approximation)
erf_backward = _erf.erf_backward  # (grad, x): grad * 2/sqrt(pi) exp(-x^2)
erfc = _erf.erfc  # 1 - erf(x), keeping its relative precision in the tail
erfc_backward = _erf.erfc_backward  # (grad, x): grad * -2/sqrt(pi) exp(-x^2)
erfinv = _erfinv.erfinv  # the inverse of erf on [-1, 1]
erfinv_backward = _erfinv.erfinv_backward  # (grad, y): grad * sqrt(pi)/2 exp(y^2) from the output y
logaddexp = _logaddexp.logaddexp  # (a, b): log(e^a + e^b) without overflow
logaddexp_backward = (
    _logaddexp.logaddexp_backward
)  # (grad, a, b, need_a, need_b) -> (da, db): grad * sigmoid(+-(a - b))
logit = _logit.logit  # (x, eps): log(z / (1 - z)), z = x clamped to [eps, 1 - eps] (eps None: not clamped)
logit_backward = _logit.logit_backward  # (grad, x, eps): grad / (x (1 - x)), 0 outside the clamp (NaN outside [0, 1])
lgamma = _gamma.lgamma  # log |Gamma(x)|
polygamma = _gamma.polygamma  # (n, x): the n-th derivative of digamma (n = 0: digamma)
i0 = _bessel.i0  # the modified Bessel function I0 (Cephes' series)
i1 = _bessel.i1  # the modified Bessel function I1 (its derivative)
sigmoid = _pointwise.sigmoid  # 1 / (1 + exp(-x)), never overflowing
sigmoid_backward = _pointwise.sigmoid_backward  # (grad, y): grad * y * (1 - y) from the output y
relu = _pointwise.relu  # max(x, 0), keeping NaN and -0.0
relu_backward = _pointwise.relu_backward  # (grad, y): grad where y > 0 (or NaN), else 0
abs_backward = _pointwise.abs_backward  # (grad, x): grad * sgn(x)
sgn = _pointwise.sgn  # 1, -1, or 0 at ±0 and NaN (as PyTorch's sgn); on Tensors too, as a constant
silu = _pointwise.silu  # (x, keep_sigmoid) -> (x * sigmoid(x), sigmoid(x) or None)
silu_backward = _pointwise.silu_backward  # (grad, x, s) from the kept sigmoid s
gelu = _gelu.gelu  # (x, approximate, keep) -> (gelu(x), what the backward needs or None)
gelu_backward = _gelu.gelu_backward  # (grad, x, kept, approximate)
softplus = _softplus.softplus  # (x, beta, threshold, keep_slope) -> (softplus(x), slope or None)

# ------------------------------------------------------------------ along one dim
softmax = _softmax.softmax_forward  # (x, dim)
softmax_backward = _softmax.softmax_backward  # (y, grad, dim) from the output y
log_softmax = _softmax.log_softmax_forward  # (x, dim)
log_softmax_backward = _softmax.log_softmax_backward  # (y, grad, dim) from the output y
logsumexp = _softmax.logsumexp_forward  # (x, dim) -> (logsumexp with dim removed, p: the softmax as rows)
logsumexp_backward = _softmax.logsumexp_backward  # (p, grad, dim, like x)
softmax_parts = _softmax.softmax_parts  # (rows,) -> (softmax, row shift, log of the shifted sum), by rows
scaled_rows = _softmax.scaled_rows  # (p, scale, index, at): p * scale by rows, ``at`` taken off at ``index``
as_rows = _dispatch.as_rows  # (x, dim) -> (C-contiguous rows with dim last, the moved shape)
from_rows = _dispatch.from_rows  # (rows, moved shape, dim, like): back to like's layout
amax = _extremum.amax  # (x, dim): the max along dim, dim removed
amin = _extremum.amin  # (x, dim): the min along dim, dim removed
extremum_backward = _extremum.extremum_backward  # (x, m, grad, dim): shared evenly by the tied extrema
cumsum = _cumsum.cumsum  # (x, dim, reverse): running sums accumulated in float64 (as PyTorch)
cumprod = _cumsum.cumprod  # (x, dim): running products, likewise
logcumsumexp = _cumsum.logcumsumexp  # (x, dim): running log-sum-exps, likewise
running_extremum_index = _running_extremum.running_extremum_index  # (x, dim, largest): cummax/cummin's indices
layer_norm = _layer_norm.layer_norm_forward  # (rows, weight, bias, eps, ...) -> (y, mean, rstd)
layer_norm_backward = _layer_norm.layer_norm_backward  # (grad, s, mean, rstd, weight) -> (dx, dw, db)
rms_norm = _rms_norm.rms_norm_forward  # (rows, weight, eps, shape) -> (y, rstd)
rms_norm_backward = _rms_norm.rms_norm_backward  # (grad, rows, rstd, weight) -> (dx, dw)
topk_indices = _topk.topk_indices  # (rows, k, largest): the k best positions of each row, ties by index
first_of_stable_sort = _topk.first_of_stable_sort  # (rows, k, largest): the same by a stable sort (any k)

# ------------------------------------------------------------------ indexing and selection
gather = _along_dim.gather  # (x, index, dim)
scatter = _along_dim.scatter  # (out, index, values, dim): in place
scatter_add = _along_dim.scatter_add  # (out, index, values, dim): in place, repeated indices add up
index_range = _along_dim.index_range  # (index,) -> (smallest, largest)
index_add = _scatter.index_add  # (out, key, values): np.add.at, in place
add_picked_rows = _scatter.add_picked_rows  # (out, rows, source, picked): out[rows] += source[picked], in place
where = _where.where  # (cond, a, b)
where_backward = _where.where_backward  # (cond, grad, need) -> (grad where cond, grad elsewhere)
flip = _flip.flip  # (x, dims): a reversed copy
triangle = _triangle.triangle  # (x, diagonal, upper): tril / triu
solve_triangular = _triangular_solve.solve_triangular  # (t, b, upper, unit): X = T^-1 B by substitution
# stacks of small square matrices by LU (NumPy's LAPACK for larger ones): as np.linalg's functions
det = _lu.det  # (a,) -> det
slogdet = _lu.slogdet  # (a,) -> (sign, log |det|)
solve = _lu.solve  # (a, b) -> a^-1 b
inv = _lu.inv  # (a,) -> a^-1

# ------------------------------------------------------------------ losses
bce_logs = _bce.logs  # (p,) -> (log p, log(1 - p))
bce = _bce.bce  # (log p, log(1 - p), t, w, per_element)
bce_backward = _bce.bce_backward  # (p, t, w, log p, log(1 - p), grad, need) -> (dp, dt, dw)
bce_logits = _softplus.bce_logits  # binary cross-entropy of logits (with pos_weight)
bce_logits_backward = _softplus.bce_logits_backward  # (x, t, w, pw, s, sp, grad, need) -> (dx, dt)
kl_div = _divergence.kl_div  # (x, t, log_target, per_element) -> (loss, log t or exp t)
robust_loss = _robust_loss.robust_loss  # (d, kind, limit): l1, smooth L1, Huber of differences
robust_slope = _robust_loss.robust_slope  # (d, kind, limit, grad)
target_losses = _class_targets.target_losses  # cross-entropy / NLL: each row's target picked, in one pass


# ------------------------------------------------------------------ products
matmul = _matmul.batched_matmul  # np.matmul(a, b), one BLAS call per matrix of a stack where that pays
rows_product = _dot_tiles.product  # (a, b, out): out = a @ bᵀ, on register tiles where they beat BLAS (long sums)
conv_window = _im2col.window  # (kernel, stride, padding before, dilation, output grid) -> the windows of a conv
conv2d = _conv.conv2d  # (x, weight, bias, window, groups): im2col + one GEMM per group (depthwise: direct)
conv2d_input_grad = _conv.conv2d_input_grad  # (grad, weight, size, window, groups): the transposed convolution
conv2d_weight_grad = _conv.conv2d_weight_grad  # (x, grad, window, groups): sum over images of grad @ colsᵀ
im2col = _im2col.im2col  # (x, window): every window of x (N, C, H, W) as a column (F.unfold)
col2im = _im2col.col2im  # (cols, size, window): the columns added back onto the image (F.fold)
attention_forward = _attention.attention_forward  # (q, k, v, mask, scale, dropout) -> (out, P)
attention_backward = _attention.attention_backward  # (grad, q, k, v, P, scale, dropout) -> (dq, dk, dv)
heads_forward = _attention.heads_forward  # the same on heads already in the kernels' 4-D form
heads_backward = _attention.heads_backward  # the backward of heads_forward, into dq, dk, dv
attention_probs = _attention_softmax.attention_probs  # (q, k, mask, scale): softmax(scale q kᵀ + mask)
softmax_scores_backward = _attention_softmax.softmax_scores_backward  # (p, dp, dropout, scale)
mask_4d = _attention_softmax._mask_4d  # (mask, shape, dtype): an additive mask in the kernels' 4-D form
as_4d = _attention_softmax._as_4d  # (a, shape): a broadcast to (..., L, S) as 4-D
lstm_forward = _lstm.lstm_forward  # a whole LSTM layer's recurrence in one call
lstm_backward = _lstm.lstm_backward  # -> the gates' gradients of every step, dh0, dc0
gru_forward = _gru.gru_forward  # a whole GRU layer's recurrence in one call
gru_backward = _gru.gru_backward  # -> the gates' gradients of every step, dh0
bias_relu_dropout = _activation.relu_forward  # (z, bias, keep, scale): relu(z + bias) * keep * scale
bias_relu_dropout_backward = _activation.relu_backward  # (out, grad, scale, need_bias) -> (dpre, dbias)
bias_gelu_dropout = _activation.gelu_forward  # (z, bias, keep, scale, approximate) -> (pre, out)
bias_gelu_dropout_backward = _activation.gelu_backward  # (pre, grad, keep, scale, approximate, need_bias)

# ------------------------------------------------------------------ optimizers
adam_settings = _adam.adam_settings  # a step's numbers in the parameter's dtype (once per group and step)
adam_apply = _adam.adam_apply  # one Adam step of one parameter, in place, in one pass

# ------------------------------------------------------------------ vision
max_pool = _pool.max_pool  # (planes, rows, cols) -> (each window's max, its flat index)
empty_windows = _pool.empty_windows  # (rows, cols) -> (Ho, Wo) True where a window has no tap inside, or None
window_mean = _window_mean.window_mean  # (planes, rows, cols, divisor): each window's sum / its divisor
window_mean_transpose = _window_mean.window_mean_transpose  # (grad, rows, cols, divisor, size): its backward
batch_norm_stats = _batch_norm.batch_norm_stats  # (x (N, C, L),) -> (mean, biased var) per channel, float64
batch_norm_forward = _batch_norm.batch_norm_forward  # (x, mean, invstd, weight, bias, shape) -> y
batch_norm_backward = _batch_norm.batch_norm_backward  # (grad, x, mean, invstd, weight, training, shape) -> dx, dw, db
channel_affine = _batch_norm.channel_affine  # (x (N, C, L), a, b): x * a[c] + b[c]
group_norm_forward = _group_norm.group_norm_forward  # (x, groups, weight, bias, eps, shape) -> y, mean, invstd
group_norm_backward = _group_norm.group_norm_backward  # (grad, x, mean, invstd, weight, shape) -> dx, dw, db

# ------------------------------------------------------------------ distances
pdist_forward = _pdist.pdist_forward  # (x (N, M),) -> the Euclidean distances of the pairs of rows i < j
pdist_backward = _pdist.pdist_backward  # (grad, x, y) -> dx
cdist_forward = _cdist.distances  # (x1 (..., P, M), x2 (..., R, M)) -> (..., P, R) Euclidean distances by a product
cdist_backward = _cdist.distances_backward  # (grad, x1, x2, d, needs) -> dx1, dx2
cross = _cross.cross  # (a, b, dim): the cross product of 3-vectors along dim
ctc_alpha = _ctc.ctc_alpha  # (lp, ext, skip, states, input_lengths, target_lengths) -> (alpha, nll)
ctc_gradient = _ctc.ctc_gradient  # (grad, lp, alpha, nll, ext, skip, states, input_lengths) -> d lp
resample = _resample.resample  # (planes, rows, cols): sum of weighted taps per output (interpolate, pad)
resample_transpose = _resample.resample_transpose  # (grad, rows, cols, size): its backward, a scatter-add
pad_planes = _constant_pad.pad_planes  # (x, top, bottom, left, right, value): the last two dims padded
crop_planes = _constant_pad.crop_planes  # (g, top, bottom, left, right): its gradient, a contiguous crop

# ------------------------------------------------------------------ remainders and piecewise activations
fmod = _modulo.fmod  # (a, b): C's fmod, the dividend's sign (NumPy's for integers)
remainder = _modulo.remainder  # (a, b): PyTorch's remainder, the divisor's sign (fmod's zero kept)
quotient = _modulo.quotient  # (a, b, floor): a.div(b, rounding_mode="floor" or "trunc")
quotient_grad = _modulo.quotient_grad  # (grad, a, b, floor): -grad * quotient(a, b, floor), in one pass
leaky_relu = _piecewise.leaky_relu  # (x, slope)
leaky_relu_backward = _piecewise.leaky_relu_backward  # (grad, x, slope)
hardtanh = _piecewise.hardtanh  # (x, low, high): clip, NaN kept
hardtanh_backward = _piecewise.hardtanh_backward  # (grad, x, low, high)
clamp_backward = _piecewise.clamp_backward  # (grad, x, low, high): grad on [low, high], bounds included
hardsigmoid = _piecewise.hardsigmoid  # (x,)
hardsigmoid_backward = _piecewise.hardsigmoid_backward  # (grad, x)
hardswish = _piecewise.hardswish  # (x,)
hardswish_backward = _piecewise.hardswish_backward  # (grad, x)
threshold = _piecewise.threshold  # (x, threshold, value)
threshold_backward = _piecewise.threshold_backward  # (grad, x, threshold)
softshrink = _piecewise.softshrink  # (x, lambd)
hardshrink = _piecewise.hardshrink  # (x, lambd)
shrink_backward = _piecewise.shrink_backward  # (grad, x, lambd): both shrinks' gradient
frac = _piecewise.frac  # (x,): x - trunc(x)
reduce_sum = _total.total_sum  # (x, axis, keepdims): np.sum, one pass in float64 lanes over all of a float32 array
reduce_mean = _total.total_mean  # (x, axis, keepdims): np.mean, the same
row_dots = _total.row_dots  # (a, b): (...,) the dot products of the rows (last dim) of two float arrays, float64 sums
reduce_product = _product.product  # (x, axis, keepdims): np.multiply.reduce; along rows in SIMD lanes
negative = _expand.negative  # (grad,): -grad, a broadcast view (sum's gradient) kept a view
elu = _elu.elu  # (x, alpha, scale, input_scale): ELU, SELU and CELU
elu_backward = _elu.elu_backward  # (grad, x, alpha, scale, input_scale)
elu_backward_of_result = _elu.elu_backward_of_result  # (grad, y, alpha, scale, input_scale): from the result
hypot = _hypot.hypot  # (a, b): sqrt(a^2 + b^2) without overflow
hypot_backward = _hypot.hypot_backward  # (grad, a, b, out, need_a, need_b) -> (da, db)
exp2_backward = _exp2.exp2_backward  # (grad, y): grad * y * ln 2 from the output y
glu = _glu.glu  # (x, dim, keep) -> (a * sigmoid(b), sigmoid(b) or None), a, b the halves along dim
glu_backward = _glu.glu_backward  # (grad, x, s, dim) -> dx
