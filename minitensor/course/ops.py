"""minitensor ops whose forward and backward call a workbook's functions, and the same ops from minitensor.

``build(wb)`` turns a workbook (an object with one module per task: ``wb.elementwise``,
``wb.broadcasting``, ...) into a namespace of ops on Tensors.  Each op is a
``minitensor.autograd.Function`` whose ``forward``/``backward`` call the student's
functions, so the student's code runs inside minitensor's graph in place of the
library's own rules (in the child process that runs the student's code).  Every
gradient a student returns is shape-checked (``diagnose.check_shape``): the engine
would otherwise quietly sum a broadcast gradient that the student forgot to reduce.
``reference_ops()`` has the same names on minitensor's own ops: the grader's references.

Example (``reference_workbook`` is in workbook.py)::

    ops = build(reference_workbook())
    y = ops.mul(x, w)         # a Tensor whose grad_fn, MulBackward, calls wb.elementwise.mul_backward
"""

from __future__ import annotations

import functools
import operator
from types import SimpleNamespace

import numpy as np

import minitensor as mt
from minitensor.autograd import Function

from .diagnose import check_shape
from .engine_adapter import backward_with


class StudentOp(Function):
    """An op whose forward and backward are the student's NumPy functions: on arrays, as the
    built-in ops, and once differentiable (the student's backward is not written in Tensor ops)."""

    on_arrays, differentiable_backward = True, False


def build(wb) -> SimpleNamespace:
    """The ops of workbook ``wb`` (see the module docstring)."""

    def unbroadcast(what: str, grad, out_shape: tuple, shape: tuple) -> np.ndarray:
        """A rule's gradient (checked to have the output's shape) summed back to an input's ``shape``."""
        grad = check_shape(what, grad, out_shape)
        return check_shape("broadcasting.unbroadcast", wb.broadcasting.unbroadcast(grad, shape), shape)

    def binary(name: str, rule: str, forward) -> type:
        """An op of two broadcasting inputs whose backward is ``wb.elementwise.<rule>``."""

        def fwd(ctx, a, b):
            ctx.save_for_backward(a, b)
            return forward(a, b)

        def bwd(ctx, grad):
            a, b = ctx.saved_tensors
            ga, gb = (grad, grad) if rule == "add" else getattr(wb.elementwise, rule)(grad, a, b)
            return (unbroadcast(f"{rule} (1st)", ga, grad.shape, a.shape),
                    unbroadcast(f"{rule} (2nd)", gb, grad.shape, b.shape))  # fmt: skip

        return type(name, (StudentOp,), {"forward": staticmethod(fwd), "backward": staticmethod(bwd)})

    def unary(name: str, forward, backward) -> type:
        """``backward(ctx, grad)`` reads ctx.x / ctx.out / ctx.settings."""

        def fwd(ctx, x, **settings):
            ctx.x, ctx.settings = x, settings
            ctx.out = forward(x, **settings)
            return ctx.out

        def bwd(ctx, grad):
            return check_shape(name, backward(ctx, grad), ctx.x.shape)

        return type(name, (StudentOp,), {"forward": staticmethod(fwd), "backward": staticmethod(bwd)})

    def reduction(name: str, forward, rule: str) -> type:
        """A reduction whose backward is ``wb.reductions.<rule>(grad, shape, dim, keepdim)``."""
        return unary(name, forward, lambda c, g: getattr(wb.reductions, rule)(g, c.x.shape, c.settings["dim"],
                                                                              c.settings["keepdim"]))  # fmt: skip

    ew = lambda: wb.elementwise  # noqa: E731  (looked up when used: a check may not need every task)
    red = lambda: wb.reductions  # noqa: E731
    sm = lambda: wb.softmax  # noqa: E731
    Add = binary("Add", "add", np.add)
    Mul = binary("Mul", "mul_backward", np.multiply)
    Div = binary("Div", "div_backward", np.divide)
    Pow = unary("Pow", lambda x, p: x**p, lambda c, g: ew().pow_backward(g, c.x, c.settings["p"]))
    Exp = unary("Exp", np.exp, lambda c, g: ew().exp_backward(g, c.out))
    Tanh = unary("Tanh", np.tanh, lambda c, g: ew().tanh_backward(g, c.out))
    Relu = unary("Relu", lambda x: np.maximum(x, 0), lambda c, g: ew().relu_backward(g, c.x))
    Sum = reduction("Sum", lambda x, dim, keepdim: np.sum(x, axis=dim, keepdims=keepdim), "sum_backward")
    Mean = reduction("Mean", lambda x, dim, keepdim: np.mean(x, axis=dim, keepdims=keepdim), "mean_backward")
    Max = unary(
        "Max",
        lambda x, dim, keepdim: np.max(x, axis=dim, keepdims=keepdim),
        lambda c, g: red().max_backward(g, c.x, c.out, c.settings["dim"], c.settings["keepdim"]),
    )
    Softmax = unary(
        "Softmax",
        lambda x, dim: sm().softmax_forward(x, dim),
        lambda c, g: sm().softmax_backward(g, c.out, c.settings["dim"]),
    )
    LogSoftmax = unary(
        "LogSoftmax",
        lambda x, dim: sm().log_softmax_forward(x, dim),
        lambda c, g: sm().log_softmax_backward(g, c.out, c.settings["dim"]),
    )
    Index = unary(
        "Index", lambda x, index: x[index], lambda c, g: wb.indexing.index_backward(g, c.x.shape, c.settings["index"])
    )

    class Matmul(StudentOp):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ga, gb = wb.matmul.matmul_backward(grad, a, b)
            batch = grad.shape[:-2]
            return (unbroadcast("matmul_backward (1st)", ga, batch + a.shape[-2:], a.shape),
                    unbroadcast("matmul_backward (2nd)", gb, batch + b.shape[-2:], b.shape))  # fmt: skip

    class LayerNorm(StudentOp):
        @staticmethod
        def forward(ctx, x, weight, bias, eps=1e-5):
            y, ctx.cache = wb.layer_norm.layer_norm_forward(x, weight, bias, eps)
            ctx.shapes = (x.shape, weight.shape, bias.shape)
            return y

        @staticmethod
        def backward(ctx, grad):
            grads = wb.layer_norm.layer_norm_backward(grad, ctx.cache)
            return tuple(check_shape("layer_norm_backward", g, s) for g, s in zip(grads, ctx.shapes))

    class CrossEntropy(StudentOp):
        @staticmethod
        def forward(ctx, logits, target):
            loss, ctx.cache = wb.cross_entropy.cross_entropy_forward(logits, target)
            ctx.logits_shape = logits.shape  # (not ctx.shape: the engine's, the output's shape)
            return np.asarray(loss, dtype=logits.dtype)

        @staticmethod
        def backward(ctx, grad):
            return check_shape("cross_entropy_backward", wb.cross_entropy.cross_entropy_backward(grad, ctx.cache),
                               ctx.logits_shape), None  # fmt: skip

    class Attention(StudentOp):
        @staticmethod
        def forward(ctx, q, k, v, mask=None):
            out, ctx.cache = wb.attention.attention_forward(q, k, v, mask)
            ctx.shapes = (q.shape, k.shape, v.shape)
            return out

        @staticmethod
        def backward(ctx, grad):
            grads = wb.attention.attention_backward(grad, ctx.cache)
            return tuple(check_shape("attention_backward", g, s) for g, s in zip(grads, ctx.shapes))

    def linear(x, weight, bias=None):
        """x @ weight.T + bias, from the student's matmul and broadcasting: (..., in) -> (..., out)."""
        y = Matmul.apply(x, weight.transpose(0, 1))
        return y if bias is None else Add.apply(y, bias)

    ops = SimpleNamespace(
        add=Add.apply, mul=Mul.apply, div=Div.apply, pow=lambda x, p: Pow.apply(x, p=p), exp=Exp.apply,
        tanh=Tanh.apply, relu=Relu.apply, matmul=Matmul.apply, linear=linear,
        sum=lambda x, dim=None, keepdim=False: Sum.apply(x, dim=dim, keepdim=keepdim),
        mean=lambda x, dim=None, keepdim=False: Mean.apply(x, dim=dim, keepdim=keepdim),
        max=lambda x, dim=None, keepdim=False: Max.apply(x, dim=dim, keepdim=keepdim),
        softmax=lambda x, dim=-1: Softmax.apply(x, dim=dim),
        log_softmax=lambda x, dim=-1: LogSoftmax.apply(x, dim=dim),
        index=lambda x, index: Index.apply(x, index=np.asarray(index)),
        layer_norm=lambda x, w, b, eps=1e-5: LayerNorm.apply(x, w, b, eps=eps),
        cross_entropy=lambda logits, target: CrossEntropy.apply(logits, np.asarray(target)),
        attention=lambda q, k, v, mask=None: Attention.apply(q, k, v, mask=mask),
        backward=lambda loss, grad=None: backward_with(wb.engine, loss, grad),
        adamw=lambda params, **kw: WorkbookAdamW(wb.adam.adam_step, params, **kw),
    )  # fmt: skip
    ops.encoder_layer = lambda x, p, nhead, mask=None: wb.transformer.encoder_layer(x, p, ops, nhead, mask)
    return ops


@functools.cache
def reference_ops() -> SimpleNamespace:
    """``build``'s ops from minitensor's own (the encoder layer: the reference solution's, on these ops)."""
    import minitensor.nn.functional as F

    from .workbook import reference_workbook

    def attention(q, k, v, mask=None):  # (F's bool mask means the opposite: True = may attend)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mt.tensor(~np.asarray(mask)))

    ops = SimpleNamespace(
        add=operator.add, mul=operator.mul, div=operator.truediv, pow=lambda x, p: x**p, exp=mt.Tensor.exp,
        tanh=mt.Tensor.tanh, relu=mt.Tensor.relu, matmul=operator.matmul, linear=F.linear,
        sum=lambda x, dim=None, keepdim=False: x.sum(dim, keepdim),
        mean=lambda x, dim=None, keepdim=False: x.mean(dim, keepdim),
        max=lambda x, dim=None, keepdim=False: x.amax(dim, keepdim),
        softmax=lambda x, dim=-1: x.softmax(dim), log_softmax=lambda x, dim=-1: x.log_softmax(dim),
        index=lambda x, index: x[mt.tensor(np.asarray(index))],
        layer_norm=lambda x, w, b, eps=1e-5: F.layer_norm(x, x.shape[-1:], w, b, eps),
        cross_entropy=lambda logits, target: F.cross_entropy(logits, mt.tensor(np.asarray(target))),
        attention=attention,
    )  # fmt: skip
    solution = reference_workbook().transformer
    ops.encoder_layer = lambda x, p, nhead, mask=None: solution.encoder_layer(x, p, ops, nhead, mask)
    return ops


class WorkbookAdamW(mt.optim.AdamW):
    """minitensor's AdamW (its settings, state dict and schedulers) with the workbook's ``adam_step``."""

    def __init__(self, adam_step, params, **settings) -> None:
        super().__init__(params, **settings)
        self._adam_step = adam_step

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
        state["step"] += 1
        beta1, beta2 = group["betas"]
        new, m, v = self._adam_step(param.copy(), grad, state["exp_avg"], state["exp_avg_sq"], state["step"],
                                    group["lr"], beta1, beta2, group["eps"], group["weight_decay"])  # fmt: skip
        param[...] = check_shape("adam_step (param)", new, param.shape)
        state["exp_avg"] = check_shape("adam_step (m)", m, param.shape)
        state["exp_avg_sq"] = check_shape("adam_step (v)", v, param.shape)
