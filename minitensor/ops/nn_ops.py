"""Neural-network ops: softmax and log-softmax along one dim, and the ops behind ``minitensor.nn``'s
layers (linear, layer norm, GELU, dropout, embedding).  (The fused Transformer sub-layers built
on them are in ``ops/fused/``.)

The row-wise math runs in ``minitensor.kernels`` (numba kernels, each beside its
NumPy reference; ``mt.set_jit_enabled(False)`` selects the references); the
matrix products are NumPy's (BLAS).

Softmax and log-softmax subtract the row max before ``exp``, so no finite input
overflows.  A row of all ``-inf`` gives NaN in softmax (0/0), as in PyTorch and NumPy.

Higher order.  Each op saves its inputs (or output) with ``save_for_backward``
and, last, a tuple of the kernel's intermediates (``save_with_state``): released after
backward like the rest, but never turned into Tensors.  First-order backward
(``grad`` an array) runs the kernels on those; with ``create_graph=True``
(``grad`` a Tensor) the kernel-backed ops (layer norm, GELU) return ``composite_grads``
of their definition in Tensor ops (``layer_norm``, ``gelu``, ``gelu_tanh`` below), and
softmax, log-softmax, linear, dropout and embedding run their backward formula on the
Tensors; either way the gradient is a graph.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend, random
from ..autograd import batching
from ..autograd.batching import decompose, elementwise, loop, shift
from ..autograd.composite import composite_grads, composite_jvp
from ..autograd.dual import linear, plus
from ..autograd.function import Op
from ..tensor import Tensor
from .shape import IndexAdd
from .special import Erf


def on_arrays(grad) -> bool:
    """First-order backward (an array, or a NumPy scalar from a 0-d sum), not create_graph's Tensor?"""
    return isinstance(grad, (np.ndarray, np.generic))


def save_with_state(ctx, *tensors, state=()) -> None:
    """Save the op's inputs (or output) for backward, then ``state``: the kernel's intermediates as
    one tuple (released after backward with the rest; never turned into Tensors).  Nothing is kept
    when no input needs a gradient (inference: the node is not recorded)."""
    if True in ctx.needs_input_grad:
        ctx.saved_tensors = (*tensors, tuple(state))


def composite(forward, inputs: tuple, ctx, grad, **settings) -> tuple:
    """The create_graph path of a fused op: the gradients of ``forward(*inputs, **settings)``,
    its definition in Tensor ops, as Tensors in the graph."""
    return composite_grads(lambda *xs: forward(*xs, **settings), inputs, grad, ctx.needs_input_grad)


class Softmax(Op):
    """y = exp(x) / sum(exp(x)) along ``dim``;  dx = y * (dy - sum(dy * y))."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        y = backend.softmax(x, dim)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if on_arrays(grad):
            return backend.softmax_backward(y, grad, ctx.dim)
        return y * (grad - np.sum(grad * y, axis=ctx.dim, keepdims=True))

    jvp = backward  # the softmax's Jacobian, diag(y) - y yᵀ, is symmetric: J·v is its backward applied to v

    batch = shift("dim")  # vmap: the softmax's dim moves one up


class LogSoftmax(Op):
    """y = x - logsumexp(x) along ``dim``;  dx = dy - exp(y) * sum(dy)."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        y = backend.log_softmax(x, dim)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if on_arrays(grad):
            return backend.log_softmax_backward(y, grad, ctx.dim)
        return grad - np.exp(y) * np.sum(grad, axis=ctx.dim, keepdims=True)

    @staticmethod
    def jvp(ctx, dx):
        return dx - np.sum(np.exp(ctx.output) * dx, axis=ctx.dim, keepdims=True)  # dx - softmax · dx

    batch = shift("dim")


class Linear(Op):
    """y = x @ W.T + b over the last dim of x;  dx = dy @ W, dW = dy.T @ x, db = sum(dy).

    ``x`` (..., in), ``W`` (out, in), ``b`` (out,) or None.  The batch dims are
    flattened (a view for contiguous x), so each gradient is one GEMM.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        y = affine(_rows_view(x), weight, bias, x.shape[:-1] + weight.shape[:1])  # (x's rows: a view if contiguous)
        ctx.save_for_backward(x, weight)  # (both, always: a weight changed before backward raises)
        ctx.x_shape = x.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors  # (methods that arrays and Tensors share: no dispatch overhead)
        needs = ctx.needs_input_grad
        g = grad.reshape(math.prod(ctx.x_shape[:-1]), grad.shape[-1])  # (M, out)
        gx = (g @ weight).reshape(ctx.x_shape) if needs[0] else None
        gw = g.T @ _rows_view(x) if needs[1] else None
        if len(needs) == 2:
            return gx, gw
        return gx, gw, backend.column_sums(g) if needs[2] else None

    @staticmethod
    def jvp(ctx, dx, dweight, dbias=None):
        x, weight = ctx.inputs[:2]
        return linear_tangent(x, dx, weight, dweight, dbias)

    @staticmethod
    def batch(b):
        if not any(b.batched[1:]):  # a batch of inputs through one layer: the batch dim is one more row dim
            return b.run(*b.values)
        return decompose(lambda x, w, bias=None: x @ w.mT if bias is None else x @ w.mT + bias)(b)  # (an ensemble)


def linear_tangent(x, dx, weight, dweight, dbias):
    """The tangent of ``x Wᵀ + b``, ``dx Wᵀ + x dWᵀ + db`` (a tangent None where there is none), as
    one op: ``Linear`` when one product is there (with db as its bias), ``LinearTangent`` for both."""
    if dx is not None and dweight is not None:
        return LinearTangent.call(x, dx, weight, dweight, dbias)
    if dx is None and dweight is None:
        return dbias
    return Linear.call(x, dweight, dbias) if dx is None else Linear.call(dx, weight, dbias)


class LinearTangent(Op):
    """y = dx Wᵀ + x dWᵀ + db: Linear's tangent when both its input and its weight carry one (a
    hidden layer in a Hessian-vector product or a neural tangent kernel), one op where it was two
    Linears and an Add (three nodes for a backward through the tangent).  x, dx (..., in); W, dW
    (out, in); db (out,) or None.  Backward: dx' = g dW, d(dx) = g W, dW' = gᵀ dx, d(dW) = gᵀ x,
    d(db) = sum(g); its tangent is two of these (the product rule on each product)."""

    @staticmethod
    def forward(ctx, x, dx, weight, dweight, dbias=None):
        shape = x.shape[:-1] + weight.shape[:1]
        y = affine(_rows_view(dx), weight, dbias, shape)
        y += affine(_rows_view(x), dweight, None, shape)
        ctx.save_for_backward(x, dx, weight, dweight)
        ctx.x_shape = x.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        x, dx, weight, dweight = ctx.saved_tensors  # (as Linear's: arrays or Tensors alike)
        needs = ctx.needs_input_grad
        g = grad.reshape(math.prod(ctx.x_shape[:-1]), grad.shape[-1])  # (M, out)
        grads = (
            (g @ dweight).reshape(ctx.x_shape) if needs[0] else None,
            (g @ weight).reshape(ctx.x_shape) if needs[1] else None,
            g.T @ _rows_view(dx) if needs[2] else None,
            g.T @ _rows_view(x) if needs[3] else None,
        )
        return grads if len(needs) == 4 else (*grads, backend.column_sums(g) if needs[4] else None)

    @staticmethod
    def jvp(ctx, t_x, t_dx, t_weight, t_dweight, t_dbias=None):
        x, dx, weight, dweight = ctx.inputs[:4]
        through_weight = linear_tangent(dx, t_dx, weight, t_weight, t_dbias)  # (the product rule on dx Wᵀ)
        return plus(through_weight, linear_tangent(x, t_x, dweight, t_dweight, None))  # (and on x dWᵀ)

    @staticmethod
    def batch(b):
        if not any(b.batched[2:]):  # the weights shared: the batch dim is one more row dim
            return b.run(*b.values)
        return decompose(lambda x, dx, w, dw, db=None: dx @ w.mT + x @ dw.mT + (0 if db is None else db))(b)


def layer_norm(x, weight=None, bias=None, n_dims: int = 1, eps: float = 1e-5):
    """The definition (Tensor ops): (x - mean) / sqrt(var + eps) * weight + bias over the trailing
    ``n_dims`` dims (biased var).  ``LayerNorm`` computes the same, fused."""
    dims = tuple(range(x.ndim - n_dims, x.ndim))
    centred = x - x.mean(dim=dims, keepdim=True)
    y = centred / ((centred * centred).mean(dim=dims, keepdim=True) + eps).sqrt()
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


class LayerNorm(Op):
    """Normalise over the trailing ``n_dims`` dims, then scale by ``weight`` and shift by ``bias``.

    With D = the size of those dims, each row r of x (viewed as (M, D)):
    ``xhat = (r - mean(r)) / sqrt(var(r) + eps)``, ``y = xhat * weight + bias``.
    Backward, with ``g = dy * weight``:
    ``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))``, ``dweight = sum(dy * xhat)``,
    ``dbias = sum(dy)`` (sums over the rows).  A constant row gives xhat = 0, not NaN.
    Kernel state: x as rows, and the mean and 1/std of each row (``kernels.layer_norm``).
    """

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, n_dims=1, eps=1e-5):
        norm_shape = x.shape[x.ndim - n_dims :]
        rows = _rows(x, math.prod(norm_shape))  # (math.prod: np.prod costs ~3 µs on a tuple)
        y, mean, rstd = backend.layer_norm(rows, weight, bias, eps, shape=x.shape)
        save_with_state(ctx, x, weight, bias, state=(rows, mean, rstd))
        ctx.norm_shape, ctx.eps = norm_shape, eps
        return y

    @staticmethod
    def backward(ctx, grad):
        if not on_arrays(grad):
            settings = {"n_dims": len(ctx.norm_shape), "eps": ctx.eps}
            return composite(layer_norm, ctx.saved_tensors[:-1], ctx, grad, **settings)
        _, weight, _, (rows, mean, rstd) = ctx.saved_tensors
        dx, dw, db = backend.layer_norm_backward(grad, rows, mean, rstd, weight)  # (dx: grad's shape)
        need_x, need_w, need_b = ctx.needs_input_grad
        return (
            dx if need_x else None,
            dw.reshape(ctx.norm_shape) if need_w else None,
            db.reshape(ctx.norm_shape) if need_b else None,
        )

    @staticmethod
    def jvp(ctx, dx, dweight, dbias):
        if not all(t is None or on_arrays(t) for t in (dx, dweight, dbias)):
            settings = {"n_dims": len(ctx.norm_shape), "eps": ctx.eps}
            return composite_jvp(lambda *xs: layer_norm(*xs, **settings), ctx.inputs, (dx, dweight, dbias))
        _, weight, _, (rows, mean, rstd) = ctx.saved_tensors
        xhat = (rows - mean[:, None]) * rstd[:, None]  # (M, D)
        dy = None
        if dx is not None:  # d xhat = rstd * (dx - mean(dx) - xhat * mean(dx * xhat)), per row
            d = dx.reshape(rows.shape)
            dy = rstd[:, None] * (d - d.mean(1, keepdims=True) - xhat * (d * xhat).mean(1, keepdims=True))
            dy = dy if weight is None else dy * weight.reshape(-1)
        dy = plus(
            dy, None if dweight is None else xhat * dweight.reshape(-1), None if dbias is None else dbias.reshape(-1)
        )
        return dy.reshape(ctx.output.shape)

    @staticmethod
    def batch(b):
        if not any(b.batched[1:3]):
            return b.run(*b.values)
        return decompose(layer_norm)(b)


def _rows_view(x):
    """x (..., D), an array or a Tensor, as (M, D), M the product of the leading dims (a view unless x
    is non-contiguous).
    Not ``reshape(-1, D)``: that fails on an empty x when D = 0."""
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


def affine(rows: np.ndarray, weight: np.ndarray, bias, shape: tuple) -> np.ndarray:
    """rows @ weightᵀ + bias as a new array of ``shape``: rows (M, in), weight (out, in), bias (out,)
    or None; ``shape`` holds M * out elements (e.g. the batch dims, then out).  The product is
    written through a (M, out) view of the result, so the result owns its memory (a reshaped view
    would make ``Function.apply`` search the op's inputs for memory it could share)."""
    y = np.empty(shape, np.result_type(rows, weight))
    y_rows = y.reshape(rows.shape[0], weight.shape[0])
    backend.rows_product(rows, weight, y_rows)
    if bias is not None:
        y_rows += bias
    return y


def _rows(x: np.ndarray, d: int) -> np.ndarray:
    """x as a C-contiguous (M, d) array (a view when x is contiguous)."""
    return np.ascontiguousarray(x).reshape(-1, d) if x.size else x.reshape(0, d)


def gelu(x):
    """The definition of exact GELU (Tensor ops): x * (1 + erf(x / sqrt 2)) / 2."""
    return x * (0.5 * (1 + Erf.apply(x * math.sqrt(0.5))))


def gelu_tanh(x):
    """The definition of tanh GELU (Tensor ops): x/2 * (1 + tanh(sqrt(2/pi) * (c + 0.044715 c^3))),
    c = x clipped to [-50, 50] (as the kernel)."""
    c = x.clamp(-50.0, 50.0)
    return (0.5 * x) * (1 + (math.sqrt(2.0 / math.pi) * (c + 0.044715 * (c * c * c))).tanh())


class Gelu(Op):
    """Exact GELU: y = x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2;  dy/dx = Phi(x) + x * phi(x).

    One kernel pass each way (``kernels/gelu.py``); the forward keeps Phi(x) for the backward."""

    @staticmethod
    def forward(ctx, x):
        return _gelu_forward(ctx, x, "none")

    @staticmethod
    def backward(ctx, grad):
        return _gelu_backward(ctx, grad, "none")

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class GeluTanh(Op):
    """Tanh-approximated GELU: y = x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).

    dy/dx = (1 + t)/2 + x/2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2), t = tanh(u).

    Beyond |x| = 50, t is exactly ±1 (in float32 and float64), so u is computed
    from x clipped to [-50, 50]: x^3 cannot overflow, and the second term of
    dy/dx is 0 there instead of 0 * inf = NaN (PyTorch's is NaN at x = ±inf).
    One kernel pass each way (``kernels/gelu.py``); the forward keeps exp(-2|u|), so the
    backward computes no exp.
    """

    @staticmethod
    def forward(ctx, x):
        return _gelu_forward(ctx, x, "tanh")

    @staticmethod
    def backward(ctx, grad):
        return _gelu_backward(ctx, grad, "tanh")

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def _gelu_forward(ctx, x: np.ndarray, approximate: str) -> np.ndarray:
    y, kept = backend.gelu(x, approximate, keep=ctx.needs_input_grad[0])
    save_with_state(ctx, x, state=(kept,))
    return y


def _gelu_backward(ctx, grad, approximate: str):
    if not on_arrays(grad):
        forward = gelu if approximate == "none" else gelu_tanh
        return composite(forward, ctx.saved_tensors[:-1], ctx, grad)[0]
    x, (kept,) = ctx.saved_tensors
    return backend.gelu_backward(grad, x, kept, approximate)


class Dropout(Op):
    """Inverted dropout: zero each element with probability ``p``, scale the rest by 1/(1-p).

    The mask is drawn from minitensor's generator (``mt.manual_seed``) and kept
    for backward: dx = dy * mask (on arrays or on Tensors: the mask is a constant).
    """

    @staticmethod
    def forward(ctx, x, p=0.5):
        mask = dropout_multipliers(x.shape, p, x.dtype)
        save_with_state(ctx, state=(mask,))
        return x * mask

    @staticmethod
    def backward(ctx, grad):
        ((mask,),) = ctx.saved_tensors
        return grad * mask

    jvp = backward  # dy = dx * mask

    @staticmethod
    def batch(b):
        mode = batching.randomness[0] if batching.randomness else "different"
        if mode == "same":  # (one mask, every example)
            ones = Tensor._make(np.ones(b.values[0].shape[1:], b.values[0].dtype), False, None)
            return b.values[0] * Dropout.apply(ones, **b.settings)
        return b.run(b.values[0])  # (each example its own mask; "error" mode raised at the draw)


def dropout_multipliers(shape: tuple, p: float, dtype) -> np.ndarray:
    """Dropout's mask as multipliers of ``shape``: 0 with probability ``p``, else 1/(1-p) (all 0 when
    p = 1), drawn from minitensor's generator in ``dtype``."""
    keep = random.generator().random(shape, dtype=dtype) >= p
    mask = keep.astype(dtype)
    mask *= 1.0 / (1.0 - p) if p < 1 else 0.0
    return mask


class Embedding(Op):
    """Row lookup: y[...] = weight[indices[...]];  dweight = scatter-add of dy into the rows.

    ``weight`` (V, D), ``indices`` an int array of any shape -> y (*indices.shape, D).
    Repeated indices add up their gradients (``IndexAdd``, whose backward is the
    lookup again); the ``padding_idx`` row gets none.
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None):
        # (a copy when backward will need it: the caller may change its indices in place before)
        ctx.indices = indices.copy() if ctx.needs_input_grad[0] else indices
        ctx.weight_shape = weight.shape
        ctx.padding_idx = padding_idx
        return np.take(weight, indices, axis=0)

    @staticmethod
    def backward(ctx, grad):
        indices = ctx.indices.reshape(-1)
        rows = grad.reshape(-1, ctx.weight_shape[1])
        if not on_arrays(grad):  # the scatter-add as an op (differentiable again)
            if ctx.padding_idx is not None:
                rows = backend.where(np.expand_dims(indices == ctx.padding_idx, 1), 0, rows)
            return IndexAdd.apply(rows, key=indices, shape=ctx.weight_shape), None
        gw = np.zeros(ctx.weight_shape, dtype=grad.dtype)
        backend.index_add(gw, (indices,), rows)  # np.add.at; a row-loop kernel (kernels/scatter.py)
        if ctx.padding_idx is not None:
            gw[ctx.padding_idx] = 0
        return gw, None

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        if not b.batched[0]:  # one table, a batch of indices: any shape of indices is one lookup
            return b.run(*b.values)
        return loop(b)
