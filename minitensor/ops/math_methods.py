"""``Tensor``'s arithmetic: operators, comparisons, elementwise functions, reductions, ``to``.

``Tensor`` gets these methods from ``MathMethods`` (a plain table of methods, which
``ops/__init__.py`` hands to ``Tensor.add_methods``; ``tensor/tensor.py`` keeps the
data, the gradient and the graph).  Each method checks its arguments and calls one
op; the math and its gradient live in the op's file (e.g. ``x.exp()`` is
``elementwise.Exp``).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes
from .._args import _axes, _dim
from ..autograd import batching
from ..tensor import Tensor
from ..tensor.extras import parse_to
from . import arithmetic, cumsum, elementwise, functions, modulo, more_math, nn_ops, norms, power, reduce, trig
from .arguments import floating
from .operands import MaxResult, MinResult, _binary, _compare, matmul


def _numpy_names(method):
    """Accept NumPy's names for a reduction's arguments, as PyTorch does: ``axis`` for ``dim`` and
    ``keepdims`` for ``keepdim`` (lecture code writes ``counts.sum(1, keepdims=True)``)."""

    @functools.wraps(method)
    def reduction(self, *args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:  # (the common call pays for these two tests only)
            kwargs = _torch_names(kwargs, method.__name__)
        return method(self, *args, **kwargs)

    return reduction


def _torch_names(kwargs: dict, fn: str) -> dict:
    """``kwargs`` with ``axis`` renamed ``dim`` and ``keepdims`` renamed ``keepdim``."""
    kwargs = dict(kwargs)
    for numpy_name, name in (("axis", "dim"), ("keepdims", "keepdim")):
        if numpy_name in kwargs:
            if name in kwargs:
                raise TypeError(f"{fn}() got both {name!r} and its alias {numpy_name!r}")
            kwargs[name] = kwargs.pop(numpy_name)
    return kwargs


class MathMethods:
    """Tensor's methods of this file (a method table, see the module docstring)."""

    # ------------------------------------------------------- dtype conversion
    def to(self, *args, **kwargs):
        """A tensor with another dtype (self if nothing changes, unless ``copy=True``).

        ``to(dtype)``, ``to('cpu')``, ``to('cpu', mt.float64)``, ``to(other_tensor)``;
        a device other than the CPU raises ValueError.  Differentiable between float dtypes.
        """
        dtype = parse_to(args, kwargs)
        if dtype is None or dtype == self._data.dtype:
            return Tensor._make(self._data.copy(), False, None) if kwargs.get("copy") else self
        if dtype.kind != "f":  # int/bool results carry no gradient (as in PyTorch)
            if batching.batched((self,)):  # (inside vmap: every example's values at once)
                return batching.like(self, batching.physical(self).to(dtype))
            return Tensor._make(self._data.astype(dtype), False, None)
        return elementwise.Cast.apply(self, dtype=dtype)

    # ------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _binary(elementwise.Add, self, other, "add")

    def __radd__(self, other):
        return _binary(elementwise.Add, other, self, "add")

    def __sub__(self, other):
        return _binary(elementwise.Sub, self, other, "sub")

    def __rsub__(self, other):
        return _binary(elementwise.Sub, other, self, "sub")

    def __mul__(self, other):
        return _binary(elementwise.Mul, self, other, "mul")

    def __rmul__(self, other):
        return _binary(elementwise.Mul, other, self, "mul")

    def __truediv__(self, other):
        return _binary(elementwise.Div, self, other, "div", floating=True)

    def __rtruediv__(self, other):
        return _binary(elementwise.Div, other, self, "div", floating=True)

    def __floordiv__(self, other):
        return modulo.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return modulo.floor_divide(other, self)

    def __mod__(self, other):
        return modulo.remainder(self, other)

    def __rmod__(self, other):
        return modulo.remainder(other, self)

    def __ifloordiv__(self, other):
        return modulo.in_place(self, np.floor_divide, "//=", other)

    def __imod__(self, other):
        return modulo.in_place(self, np.remainder, "%=", other)

    def floor_divide(self, other):
        return modulo.floor_divide(self, other)

    def remainder(self, other):
        return modulo.remainder(self, other)

    def fmod(self, other):
        return modulo.fmod(self, other)

    def floor_divide_(self, other):
        return modulo.in_place(self, np.floor_divide, "floor_divide_", other)

    def remainder_(self, other):
        return modulo.in_place(self, np.remainder, "remainder_", other)

    def fmod_(self, other):
        return modulo.in_place(self, np.fmod, "fmod_", other)

    def __pow__(self, other):
        return power.pow(self, other)

    def __rpow__(self, other):
        return _binary(elementwise.Pow, other, self, "pow")

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __neg__(self):
        return elementwise.Neg.apply(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return elementwise.Abs.apply(self)

    # Comparisons give bool tensors and are not differentiable.
    def __lt__(self, other):
        return _compare(np.less, self, other)

    def __le__(self, other):
        return _compare(np.less_equal, self, other)

    def __gt__(self, other):
        return _compare(np.greater, self, other)

    def __ge__(self, other):
        return _compare(np.greater_equal, self, other)

    def __eq__(self, other):
        return _compare(np.equal, self, other)

    def __ne__(self, other):
        return _compare(np.not_equal, self, other)

    # ------------------------------------------------------ elementwise (integers: in the default float dtype)
    def exp(self):
        return elementwise.Exp.apply(floating(self))

    def log(self):
        return elementwise.Log.apply(floating(self))

    def sqrt(self):
        return elementwise.Sqrt.apply(floating(self))

    def abs(self):
        return elementwise.Abs.apply(self)

    def tanh(self):
        return elementwise.Tanh.apply(floating(self))

    def sigmoid(self):
        return elementwise.Sigmoid.apply(floating(self))

    def relu(self):
        return elementwise.Relu.apply(self)

    def clamp(self, min=None, max=None):  # noqa: A002  (PyTorch's names)
        """Clip values to [min, max]; either bound may be None.  A Tensor bound broadcasts and, as in
        PyTorch, takes the gradient where it is the result (``x`` keeps it where they are equal)."""
        if min is None and max is None:
            raise ValueError("clamp: at least one of min and max must be given, got both None")
        dtype = dtypes.result_type(self, *[bound for bound in (min, max) if bound is not None])
        x = self if dtype == self._data.dtype else self.to(dtype)  # (an int tensor clamped to 1.5: float32)
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            out = x
            if min is not None:
                out = functions.where(out < min, min, out)
            if max is not None:
                out = functions.where(out > max, max, out)
            return out
        return elementwise.Clamp.apply(x, low=min, high=max)

    def softmax(self, dim: int):
        return nn_ops.Softmax.apply(self, dim=_dim(dim, self.ndim))

    def log_softmax(self, dim: int):
        return nn_ops.LogSoftmax.apply(self, dim=_dim(dim, self.ndim))

    # ------------------------------------------------------- reductions
    @_numpy_names
    def sum(self, dim=None, keepdim: bool = False):
        return reduce.Sum.apply(self, axis=_axes(dim, self.ndim), keepdim=keepdim)

    @_numpy_names
    def mean(self, dim=None, keepdim: bool = False, *, dtype=None):
        """The mean over ``dim``; an integer tensor needs ``dtype`` (a float dtype to compute in), as PyTorch."""
        x = self._floats("mean", dtype)
        return reduce.Mean.apply(x, axis=_axes(dim, self.ndim), keepdim=keepdim)

    @_numpy_names
    def prod(self, dim=None, keepdim: bool = False, *, dtype=None):
        """The product of all elements, or over one ``dim`` (integers and bools give int64, as PyTorch)."""
        x = self if dtype is None else self.to(dtype)
        if x._data.dtype.kind in "bu" or x._data.dtype in (dtypes.int8, dtypes.int16, dtypes.int32):
            x = x.to(dtypes.int64)
        if dim is None:
            return reduce.Prod.apply(x.reshape(-1), axis=(0,), keepdim=False)
        return reduce.Prod.apply(x, axis=(_dim(dim, self.ndim),), keepdim=keepdim)

    @_numpy_names
    def var(self, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None):
        """Variance over ``dim``; ``unbiased=True`` divides by n - 1 (PyTorch's default)."""
        correction = (1 if unbiased else 0) if correction is None else correction
        self._floats("var")
        return reduce.Var.apply(self, axis=_axes(dim, self.ndim), keepdim=keepdim, correction=correction)

    @_numpy_names
    def std(self, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None):
        """Standard deviation over ``dim``; ``unbiased`` as in ``var``."""
        correction = (1 if unbiased else 0) if correction is None else correction
        self._floats("std")
        return reduce.Std.apply(self, axis=_axes(dim, self.ndim), keepdim=keepdim, correction=correction)

    def _floats(self, fn: str, dtype=None):
        """This tensor for a reduction defined on floats only (``dtype``: cast to it first), or
        PyTorch's RuntimeError naming the dtype: the mean of integers would need a dtype to be in."""
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
            return self if dtype == self._data.dtype else self.to(dtype)
        if self._data.dtype.kind == "f":
            return self
        if fn == "mean":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                f"dtype. Got: {dtypes.torch_name(self._data.dtype)} (pass dtype=mt.float32, or call .float() first)"
            )
        raise RuntimeError(
            f"{fn}: std and var only support floating point and complex dtypes, got {self._data.dtype} "
            "(call .float() first)"
        )

    @_numpy_names
    def amax(self, dim=None, keepdim: bool = False):
        """Max over ``dim``; tied maxima share the gradient evenly (as PyTorch's amax)."""
        return reduce.Amax.apply(self, axis=self._nonempty_axes(dim, "amax"), keepdim=keepdim)

    @_numpy_names
    def amin(self, dim=None, keepdim: bool = False):
        return reduce.Amin.apply(self, axis=self._nonempty_axes(dim, "amin"), keepdim=keepdim)

    def _nonempty_axes(self, dim, fn: str) -> tuple:
        """The reduced axes of a max/min, none of size 0 (the max of no elements is undefined)."""
        axes = _axes(dim, self.ndim)
        if self._data.size == 0:
            for d in axes:
                if self.shape[d] == 0:
                    raise ValueError(f"{fn}: cannot reduce over dim {d}, of size 0 (input shape {self.shape})")
        return axes

    @_numpy_names
    def logsumexp(self, dim=None, keepdim: bool = False):
        return reduce.LogSumExp.apply(self, axis=_axes(dim, self.ndim), keepdim=keepdim)

    @_numpy_names
    def max(self, dim=None, keepdim: bool = False):
        """``max()`` -> 0-d tensor (tied maxima share the gradient evenly); ``max(dim)`` ->
        ``(values, indices)`` (one winner per tie gets the gradient), as PyTorch."""
        return self._extremum(np.argmax, MaxResult, dim, keepdim)

    @_numpy_names
    def min(self, dim=None, keepdim: bool = False):
        return self._extremum(np.argmin, MinResult, dim, keepdim)

    @batching.per_example
    def _extremum(self, arg, result, dim, keepdim):
        if self._data.size == 0:
            raise ValueError(f"max/min: expected a non-empty tensor, got shape {self.shape}")
        if dim is not None and self.ndim == 0:  # as PyTorch: (the value, index 0)
            _dim(dim, 0)
            return self.reshape(1)._extremum(arg, result, 0, False)
        if dim is None:  # ties share the gradient evenly (PyTorch's rule for full reductions)
            op = reduce.Amax if arg is np.argmax else reduce.Amin
            return op.apply(self, axis=tuple(range(self.ndim)), keepdim=False)
        d = _dim(dim, self.ndim)
        index = np.expand_dims(arg(self._data, axis=d), d)
        values = reduce.TakeAlongDim.apply(self, index=index, dim=d, keepdim=keepdim)
        indices = index if keepdim else np.squeeze(index, d)
        if values.requires_grad:  # (the backward keeps ``index``: an in-place change of the user's
            indices = indices.copy()  # indices must not move the gradient)
        return result(values, self._make(indices, False, None))

    @_numpy_names
    def all(self, dim=None, keepdim: bool = False):
        return functions.all(self, dim, keepdim)

    @_numpy_names
    def any(self, dim=None, keepdim: bool = False):
        return functions.any(self, dim, keepdim)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        return functions.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return functions.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other) -> bool:
        return functions.equal(self, other)

    @_numpy_names
    def argmax(self, dim=None, keepdim: bool = False):
        return self._arg(np.argmax, dim, keepdim)

    @_numpy_names
    def argmin(self, dim=None, keepdim: bool = False):
        return self._arg(np.argmin, dim, keepdim)

    @batching.per_example
    def _arg(self, arg, dim, keepdim):
        if dim is None:
            return self._make(np.asarray(arg(self._data), dtype=dtypes.int64), False, None)
        d = _dim(dim, self.ndim)
        if self.ndim == 0:  # as PyTorch: index 0
            return self._make(np.zeros((), dtypes.int64), False, None)
        return self._make(arg(self._data, axis=d, keepdims=keepdim).astype(dtypes.int64, copy=False), False, None)

    # ------------------------------------------------------- more arithmetic (logic in arithmetic.py, ops/*)
    def log1p(self):
        return more_math.log1p(self)

    def expm1(self):
        return more_math.expm1(self)

    def log2(self):
        return more_math.log2(self)

    def log10(self):
        return more_math.log10(self)

    def exp2(self):
        return more_math.exp2(self)

    def rsqrt(self):
        return more_math.rsqrt(self)

    def square(self):
        return more_math.square(self)

    def reciprocal(self):
        return more_math.reciprocal(self)

    def neg(self):
        return more_math.neg(self)

    def frac(self):
        return more_math.frac(self)

    def sign(self):
        return more_math.sign(self)

    def floor(self):
        return more_math.floor(self)

    def ceil(self):
        return more_math.ceil(self)

    def round(self):
        return more_math.round(self)

    def trunc(self):
        return more_math.trunc(self)

    def sin(self):
        return trig.sin(self)

    def cos(self):
        return trig.cos(self)

    def pow(self, exponent):
        return power.pow(self, exponent)

    def pow_(self, exponent):
        return arithmetic.pow_(self, exponent)

    def add(self, other, *, alpha=1):
        return arithmetic.add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):
        return arithmetic.sub(self, other, alpha=alpha)

    def mul(self, other):
        return arithmetic.mul(self, other)

    def div(self, other, *, rounding_mode=None):
        return arithmetic.div(self, other, rounding_mode=rounding_mode)

    def add_(self, other, *, alpha=1):
        return arithmetic.add_(self, other, alpha)

    def sub_(self, other, *, alpha=1):
        return arithmetic.sub_(self, other, alpha)

    def mul_(self, other):
        return arithmetic.mul_(self, other)

    def div_(self, other):
        return arithmetic.div_(self, other)

    def clamp_(self, min=None, max=None):  # noqa: A002
        return arithmetic.clamp_(self, min, max)

    def cumsum(self, dim: int, *, dtype=None):
        return cumsum.cumsum(self, dim, dtype=dtype)

    @_numpy_names
    def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None):
        return norms.norm(self, p, dim, keepdim, dtype)


def _unary_in_place(name: str):
    def method(self):
        return arithmetic.unary_(self, name)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"``x.{name}()`` written into x (``arithmetic.unary_``)."
    return method


# The in-place forms PyTorch has of the elementwise methods above: exp_, sqrt_ ...
_UNARY = ("abs", "ceil", "cos", "exp", "exp2", "expm1", "floor", "frac", "log", "log10", "log1p", "log2", "neg",
          "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "tanh",
          "trunc")  # fmt: skip
for _name in _UNARY:
    setattr(MathMethods, f"{_name}_", _unary_in_place(_name))
