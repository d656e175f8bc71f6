"""NumPy functions called on Tensors: ``np.exp(t)``, ``np.where(c, t, 0)``, ``np.sum(t, axis=0)``.

NumPy lets another array type answer its functions (NEP 13 ``__array_ufunc__``
for ufuncs such as ``np.exp``, NEP 18 ``__array_function__`` for the rest).
A Tensor answers the ones below with its own differentiable ops, so

    np.exp(t)        is  t.exp()           (a Tensor, in the graph)
    np.where(c, t, 0) is mt.where(c, t, 0)

This is what makes the built-in backward formulas differentiable again: they
are written with operators and these NumPy functions; first-order backward
runs them on arrays, and ``create_graph=True`` runs the same lines on Tensors
(see ``autograd/function.py``).

Any other NumPy function sees the plain arrays and returns NumPy's result
(``np.allclose(t, a)`` works, as with PyTorch tensors), except inside a
backward that builds a graph: there it raises, because it would silently cut
the graph and give a wrong higher derivative.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import building_graph
from ..tensor import Tensor
from . import elementwise as E
from . import modulo
from .operands import _binary, matmul
from .shape import cat, stack, where


def _strict() -> bool:
    return building_graph()


def _plain(x):
    """Tensors (also inside lists, tuples and dicts) replaced by their arrays."""
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _unsupported(name: str):
    raise TypeError(
        f"numpy.{name} has no differentiable minitensor version, so it cannot run inside a backward "
        "that builds a graph (create_graph=True); write it with Tensor operations"
    )


def _constant(result) -> Tensor:
    return Tensor._make(np.asarray(result), False, None)


# ------------------------------------------------------------------ ufuncs
def _ufuncs() -> dict:
    """ufunc -> function of the (Tensor or scalar or array) operands returning a Tensor."""

    def binary(cls, name, floating=False):
        return lambda a, b: _binary(cls, a, b, name, floating)

    def compare(ufunc):
        return lambda a, b: Tensor._make(ufunc(_plain(a), _plain(b)), False, None)

    def unary(method):
        return lambda x: getattr(_tensor(x), method)()

    table = {
        np.add: binary(E.Add, "add"),
        np.subtract: binary(E.Sub, "sub"),
        np.multiply: binary(E.Mul, "mul"),
        np.true_divide: binary(E.Div, "div", floating=True),
        np.power: binary(E.Pow, "pow"),
        np.remainder: lambda a, b: modulo.remainder(a, b),
        np.fmod: lambda a, b: modulo.fmod(a, b),
        np.floor_divide: lambda a, b: modulo.floor_divide(a, b),
        np.matmul: lambda a, b: matmul(a, b),
        np.negative: lambda x: -_tensor(x),
        np.positive: lambda x: _tensor(x),
        np.exp: unary("exp"),
        np.log: unary("log"),
        np.sqrt: unary("sqrt"),
        np.absolute: unary("abs"),
        np.tanh: unary("tanh"),
        np.square: lambda x: _tensor(x) * _tensor(x),
        np.reciprocal: lambda x: 1 / _tensor(x),
    }
    for ufunc in (
        np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
        np.logical_and, np.logical_or, np.logical_xor, np.bitwise_and, np.bitwise_or,
    ):  # fmt: skip
        table[ufunc] = compare(ufunc)
    for ufunc in (np.sign, np.logical_not, np.invert, np.isfinite, np.isnan, np.isinf, np.signbit):
        table[ufunc] = lambda x, u=ufunc: _constant(u(_plain(x)))
    return table


def array_ufunc(tensor, ufunc, method: str, *inputs, **kwargs):
    """``Tensor.__array_ufunc__``: a ufunc applied to Tensors."""
    fn = _UFUNCS.get(ufunc) if method == "__call__" and not kwargs else None
    if fn is not None:
        return fn(*inputs)
    if _strict():
        _unsupported(f"{ufunc.__name__}{'' if method == '__call__' else '.' + method}")
    if "out" in kwargs and any(isinstance(o, Tensor) for o in kwargs["out"]):
        raise TypeError(f"numpy.{ufunc.__name__}: out= cannot be a Tensor; use the Tensor's in-place ops")
    return getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))


# ------------------------------------------------------------------ other functions
def _axis(axis, ndim):
    return None if axis is None else axis


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **unused):
    return _tensor(a).sum(dim=axis, keepdim=keepdims)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **unused):
    return _tensor(a).mean(dim=axis, keepdim=keepdims)


def _broadcast_to(a, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _tensor(a).expand(*shape)


def _expand_dims(a, axis):
    a = _tensor(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = a.ndim + len(axes)
    axes = sorted(d % ndim for d in axes)
    shape = list(a.shape)
    for d in axes:
        shape.insert(d, 1)
    return a.reshape(tuple(shape))


def _squeeze(a, axis=None):
    a = _tensor(a)
    if axis is None:
        return a.squeeze()
    axes = {d % a.ndim for d in ((axis,) if isinstance(axis, int) else axis)}
    return a.reshape(tuple(s for i, s in enumerate(a.shape) if i not in axes))


def _transpose(a, axes=None):
    a = _tensor(a)
    return a.permute(*(reversed(range(a.ndim)) if axes is None else axes))


def _moveaxis(a, source, destination):
    a = _tensor(a)
    order = [d for d in range(a.ndim) if d != source % a.ndim]
    order.insert(destination % a.ndim, source % a.ndim)
    return a.permute(*order)


def _split(a, indices_or_sections, axis=0):
    a = _tensor(a)
    size = a.shape[axis]
    if isinstance(indices_or_sections, int):
        step = size // indices_or_sections
        bounds = list(range(0, size + 1, step))
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], size]
    lead = (slice(None),) * (axis % a.ndim)
    return [a[lead + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


def _functions() -> dict:
    return {
        np.sum: _sum,
        np.mean: _mean,
        np.where: lambda c, a, b: where(_plain(c), _keep_dtype(a), _keep_dtype(b)),
        np.broadcast_to: _broadcast_to,
        np.expand_dims: _expand_dims,
        np.squeeze: _squeeze,
        np.reshape: lambda a, shape, **k: _tensor(a).reshape(shape),
        np.transpose: _transpose,
        np.swapaxes: lambda a, i, j: _tensor(a).transpose(i, j),
        np.moveaxis: _moveaxis,
        np.concatenate: lambda seq, axis=0, **k: cat([_tensor(x) for x in seq], axis),
        np.stack: lambda seq, axis=0, **k: stack([_tensor(x) for x in seq], axis),
        np.split: _split,
        np.matmul: lambda a, b, **k: matmul(a, b),
        np.shape: lambda a: a.shape,
        np.ndim: lambda a: a.ndim,
        np.size: lambda a, axis=None: a.numel() if axis is None else a.shape[axis],
    }


def array_function(tensor, func, types, args, kwargs):
    """``Tensor.__array_function__``: a NumPy function (not a ufunc) called with Tensors."""
    fn = _FUNCTIONS.get(func)
    if fn is not None:
        return fn(*args, **kwargs)
    if _strict():
        _unsupported(func.__name__)
    return func(*_plain(args), **_plain(kwargs))


def _keep_dtype(x):
    """An array operand as a constant Tensor of its own dtype (``mt.tensor`` would make float64 float32)."""
    return Tensor._make(x, False, None) if isinstance(x, np.ndarray) else x


def _tensor(x) -> Tensor:
    """A Tensor operand: Tensors as they are, arrays and scalars as constants."""
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x), False, None)


_UFUNCS = _ufuncs()
_FUNCTIONS = _functions()


class NumPyMethods:
    """Tensor's NumPy protocol methods (a method table, as ``math_methods.py``)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.exp(t)``, ``ndarray + t``: answered with minitensor's ops."""
        return array_ufunc(self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """``np.where(c, t, 0)``, ``np.sum(t, axis=0)``: likewise."""
        return array_function(self, func, types, args, kwargs)
