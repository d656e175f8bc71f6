"""Batch norm: normalise each channel (dim 1) of (N, C, *) over the batch and the spatial dims.

The definition, in Tensor ops (``batch_norm_definition``)::

    mean = x.mean(over N and the spatial dims)     var = ((x - mean)^2).mean(...)   (biased)
    y = (x - mean) / sqrt(var + eps) * weight + bias

In training the statistics are the batch's own, so they depend on x and the backward has two
terms more than a plain affine map's (derived in docs/vision.md)::

    dx = (dy - mean(dy) - xhat * mean(dy * xhat)) * invstd * weight,  xhat = (x - mean) * invstd

In evaluation they are the running statistics, constants: ``dx = dy * invstd * weight``.
``dweight = sum(dy * xhat)`` and ``dbias = sum(dy)`` either way.

Forward mode: the Jacobian of the normalisation is symmetric, so the tangent of y is the same
formula applied to the tangent of x, plus ``xhat * dweight + dbias`` (``BatchNorm.jvp``).
Under ``vmap`` each example is a whole batch (N, C, *): in evaluation the examples' batches are
one larger batch (``BatchNorm.batch``); in training each example has its own statistics (the
definition, whose ops batch), and running statistics cannot be updated (PyTorch refuses too).

``BatchNorm`` is the fused op: one pass of the statistics kernel (``backend.batch_norm_stats``,
run by ``batch_norm`` below, which also updates the running statistics), one pass for y, two
for the backward (``kernels/batch_norm.py``).  With ``create_graph=True`` its gradient is taken
through the definition instead (``composite_grads``), so it is differentiable again.

Running statistics, as PyTorch: ``running = (1 - momentum) * running + momentum * batch``, with
the *unbiased* batch variance (``var * M / (M - 1)``, M values per channel) for ``running_var``.

>>> x = mt.tensor([[1.0, 10.0], [3.0, 30.0]])            # (N=2, C=2)
>>> mean, var = mt.zeros(2), mt.ones(2)
>>> y = batch_norm(x, mean, var, None, None, True, 0.5, 0.0)
>>> y.tolist(), mean.tolist(), var.tolist()              # var: (1 + 2) / 2, (1 + 200) / 2
([[-1.0, -1.0], [1.0, 1.0]], [1.0, 10.0], [1.5, 100.5])
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.batching import Batch, batched, decompose
from ..autograd.composite import composite_jvp
from ..autograd.dual import plus
from ..autograd.function import Op
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .nn_ops import composite, on_arrays, save_with_state


def _channels(a) -> np.ndarray:
    """a (N, C, *) as (N, C, L), L the product of the spatial dims (a view when contiguous)."""
    return a.reshape(a.shape[0], a.shape[1], math.prod(a.shape[2:]))


def _per_channel(v, ndim: int):
    """A (C,) tensor or array shaped (1, C, 1, ...) to broadcast against an ``ndim``-dim input."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm_definition(x, weight=None, bias=None, mean=None, invstd=None, eps: float = 1e-5):
    """The definition (Tensor ops): normalised by the batch's statistics, or by ``mean`` and
    ``invstd`` ((C,) arrays or Tensors: evaluation) when they are given; then scaled and shifted.
    ``BatchNorm`` computes the same, fused."""
    if mean is None:
        dims = (0,) + tuple(range(2, x.ndim))
        centred = x - x.mean(dim=dims, keepdim=True)
        y = centred / ((centred * centred).mean(dim=dims, keepdim=True) + eps).sqrt()
    else:
        mean, invstd = (v.astype(x.dtype) if isinstance(v, np.ndarray) else v for v in (mean, invstd))
        y = (x - _per_channel(mean, x.ndim)) * _per_channel(invstd, x.ndim)
    if weight is not None:
        y = y * _per_channel(weight, x.ndim)
    return y if bias is None else y + _per_channel(bias, x.ndim)


class BatchNorm(Op):
    """y = (x - mean) * invstd * weight + bias per channel of x (N, C, *), with ``mean`` and
    ``invstd`` float64 (C,) arrays: the batch's statistics (``training``) or the running ones."""

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, mean=None, invstd=None, training=True, eps=1e-5):
        y = backend.batch_norm_forward(_channels(x), mean, invstd, weight, bias, shape=x.shape)
        save_with_state(ctx, x, weight, bias, state=(mean, invstd))
        ctx.training, ctx.eps = training, eps
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, (mean, invstd) = ctx.saved_tensors
        if not on_arrays(grad):  # create_graph: through the definition
            stats = {} if ctx.training else {"mean": mean, "invstd": invstd}
            return composite(batch_norm_definition, (x, weight, bias), ctx, grad, eps=ctx.eps, **stats)
        dx, dw, db = backend.batch_norm_backward(grad, _channels(x), mean, invstd, weight, ctx.training, x.shape)
        need_x, need_w, need_b = ctx.needs_input_grad
        return (
            dx if need_x else None,
            dw.astype(x.dtype) if need_w else None,
            db.astype(x.dtype) if need_b else None,
        )

    @staticmethod
    def jvp(ctx, dx, dweight, dbias):
        x, weight = ctx.inputs[:2]
        mean, invstd, training = ctx.keywords["mean"], ctx.keywords["invstd"], ctx.keywords["training"]
        if not all(isinstance(t, np.ndarray) for t in (x, dx, dweight, dbias) if t is not None):
            stats = {} if training else {"mean": mean, "invstd": invstd}
            definition = lambda *xs: batch_norm_definition(*xs, eps=ctx.keywords["eps"], **stats)  # noqa: E731
            return composite_jvp(definition, ctx.inputs, (dx, dweight, dbias))
        rows = _channels(x)  # (N, C, L), the statistics per channel: (C, 1)
        m, s = mean.astype(x.dtype)[:, None], invstd.astype(x.dtype)[:, None]
        xhat = (rows - m) * s
        dy = None
        if dx is not None:  # training: dxhat = s * (d - mean(d) - xhat * mean(d * xhat)) over (N, L)
            d = _channels(dx)
            if training:
                d = d - d.mean((0, 2), keepdims=True) - xhat * (d * xhat).mean((0, 2), keepdims=True)
            dy = d * s if weight is None else d * (s * weight[:, None])
        dy = plus(dy, None if dweight is None else xhat * dweight[:, None], None if dbias is None else dbias[:, None])
        return np.broadcast_to(dy, rows.shape).reshape(x.shape)

    @staticmethod
    def batch(b: Batch):
        """vmap: in evaluation with only x batched, the examples' batches as one batch (B * N, C, *);
        else the definition on the batched values (per-example statistics or weights)."""
        settings = b.settings
        if not settings["training"] and not any(b.batched[1:]):
            x = b.values[0]
            return b.run(x.reshape((-1,) + tuple(x.shape[2:])), *b.values[1:]).reshape(x.shape)
        stats = {} if settings["training"] else {"mean": settings["mean"], "invstd": settings["invstd"]}
        return decompose(lambda *xs, **_: batch_norm_definition(*xs, eps=settings["eps"], **stats))(b)


def batch_norm(
    input: Tensor,  # noqa: A002  (PyTorch's name)
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None,
    bias: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> Tensor:
    """Batch norm of ``input`` (N, C, *) (arguments checked by ``F.batch_norm``): with ``training``
    the batch's statistics, and the running ones (if given) updated in place; else the running ones."""
    if batched((input, weight, bias, running_mean, running_var)):
        return _batch_norm_in_vmap(input, running_mean, running_var, weight, bias, training, eps)
    x = _channels(input._data)
    count = x.shape[0] * x.shape[2]
    if not training:
        mean = running_mean._data.astype(np.float64)
        invstd = 1.0 / np.sqrt(running_var._data.astype(np.float64) + eps)
    elif count == 0:  # an empty batch: nothing to normalise, nothing learned (as PyTorch)
        mean, invstd = np.zeros(x.shape[1]), np.ones(x.shape[1])
    else:
        mean, var = backend.batch_norm_stats(x)
        invstd = 1.0 / np.sqrt(var + eps)
        if running_mean is not None:
            _update(running_mean, mean, momentum)
            _update(running_var, var * (count / (count - 1)), momentum)  # the unbiased variance
    return BatchNorm.apply(input, weight, bias, mean=mean, invstd=invstd, training=training, eps=eps)


def _batch_norm_in_vmap(input, running_mean, running_var, weight, bias, training: bool, eps: float) -> Tensor:  # noqa: A002
    """``batch_norm`` inside vmap (each example a batch): the batch statistics per example (their
    definition, which batches); in evaluation the running statistics, through ``BatchNorm`` (its
    rule) when only the input is batched."""
    if training and running_mean is not None:
        raise RuntimeError(
            "batch_norm: inside vmap in training mode, the running statistics cannot be updated in place (each "
            "example has batch statistics of its own): pass running_mean=None and running_var=None (a module: "
            "track_running_stats=False), or use evaluation mode"
        )
    if training:
        return batch_norm_definition(input, weight, bias, eps=eps)
    if batched((running_mean, running_var)):
        return batch_norm_definition(input, weight, bias, running_mean, 1.0 / (running_var + eps).sqrt(), eps)
    mean = running_mean._data.astype(np.float64)
    invstd = 1.0 / np.sqrt(running_var._data.astype(np.float64) + eps)
    return BatchNorm.apply(input, weight, bias, mean=mean, invstd=invstd, training=False, eps=eps)


def _update(running: Tensor, batch: np.ndarray, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * batch, in place (computed in float64): written
    into its array with its version bumped, as an in-place op outside the graph does (``copy_`` under
    ``no_grad`` would take ~8 µs more, a tenth of a small layer's forward).  PyTorch's kernel leaves the
    version as it is; bumping it lets a graph that saved the statistics notice the change."""
    data = running._data
    data[...] = (1.0 - momentum) * data.astype(np.float64) + momentum * batch
    running._version += 1


def instance_norm(
    input: Tensor,  # noqa: A002
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None,
    bias: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
) -> Tensor:
    """Each (sample, channel) of ``input`` (N, C, *) normalised over its spatial dims: batch norm of
    the input seen as one sample of N * C channels (PyTorch's way), the weight, bias and running
    statistics repeated per sample; the running statistics then get the mean of the N updates."""
    n, c = input.shape[:2]
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    repeated = [
        None if r is None else Tensor._make(np.tile(r._data, n), False, None) for r in (running_mean, running_var)
    ]
    y = batch_norm(x, *repeated, w, b, use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None and n:
        with no_grad():
            for running, updated in zip((running_mean, running_var), repeated):
                running.copy_(Tensor._make(updated._data.reshape(n, c).mean(axis=0).astype(running.dtype), False, None))
    return y.reshape(input.shape)
