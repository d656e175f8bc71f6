"""Tensor methods that are their functions: ``x.tan()`` is ``mt.tan(x)``, ``x.lerp_(end, 0.5)`` is
``x`` set in place to ``mt.lerp(x, end, 0.5)``.

``FunctionMethods`` is a method table (``ops/__init__.py`` hands it to ``Tensor.add_methods``) made
from ``METHODS``: each PyTorch method name and the function it calls with the tensor as its first
argument (``polygamma(n)`` is the exception: PyTorch's function takes ``n`` first), and
``IN_PLACE``: the methods with an in-place form (``name_``), which computes the function out of
place, checks that the result fits the tensor (its shape, and no float result in an integer
tensor) and writes it back through ``inplace.apply_inplace`` (recorded in the graph as PyTorch's).

>>> x = mt.tensor([0.5, 1.0])
>>> x.atan2(mt.tensor([1.0, 1.0])).tolist() == mt.atan2(x, mt.tensor([1.0, 1.0])).tolist()
True
>>> x.tan_() is x
True
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import (
    arithmetic,
    binary_math,
    counting,
    decompositions,
    determinant,
    diagonal,
    gamma,
    hyperbolic,
    inplace,
    matrix_functions,
    more_math,
    order_stats,
    products,
    reorder,
    scan,
    selection,
    solve,
    sort,
    special,
    statistics,
    trig,
)


def clamp_min(input, min):  # noqa: A002
    """``clamp(input, min=min)``."""
    return input.clamp(min=min)


def clamp_max(input, max):  # noqa: A002
    """``clamp(input, max=max)``."""
    return input.clamp(max=max)


def clip(input, min=None, max=None):  # noqa: A002
    """``clamp`` under NumPy's name."""
    return input.clamp(min, max)


def torch_qr(input, some: bool = True):  # noqa: A002
    """``torch.qr`` (``Tensor.qr``): ``linalg.qr`` in mode 'reduced' (``some=False``: 'complete')."""
    return decompositions.qr(input, "reduced" if some else "complete")


METHODS = {
    # elementwise
    "tan": trig.tan, "asin": trig.asin, "acos": trig.acos, "atan": trig.atan, "arcsin": trig.asin,
    "arccos": trig.acos, "arctan": trig.atan, "atan2": trig.atan2, "arctan2": trig.atan2,
    "sinh": hyperbolic.sinh, "cosh": hyperbolic.cosh, "asinh": hyperbolic.asinh, "acosh": hyperbolic.acosh,
    "atanh": hyperbolic.atanh, "arcsinh": hyperbolic.asinh, "arccosh": hyperbolic.acosh, "arctanh": hyperbolic.atanh,
    "erf": special.erf, "erfc": special.erfc, "erfinv": special.erfinv, "logit": special.logit, "xlogy": special.xlogy,
    "sinc": special.sinc, "i0": special.i0, "lgamma": gamma.lgamma, "digamma": gamma.digamma,
    "polygamma": lambda x, n: gamma.polygamma(n, x),
    "hypot": binary_math.hypot, "logaddexp": binary_math.logaddexp, "logaddexp2": binary_math.logaddexp2,
    "copysign": binary_math.copysign, "heaviside": binary_math.heaviside, "float_power": binary_math.float_power,
    "lerp": binary_math.lerp, "addcmul": binary_math.addcmul, "addcdiv": binary_math.addcdiv,
    "true_divide": binary_math.true_divide, "nan_to_num": more_math.nan_to_num, "sgn": more_math.sgn,
    "fix": more_math.fix, "signbit": more_math.signbit, "deg2rad": more_math.deg2rad, "rad2deg": more_math.rad2deg,
    "clip": clip, "clamp_min": clamp_min, "clamp_max": clamp_max, "divide": arithmetic.div,
    "multiply": arithmetic.mul, "subtract": arithmetic.sub, "negative": more_math.neg, "absolute": lambda x: x.abs(),
    # reductions, sorting, counting
    "kthvalue": order_stats.kthvalue, "median": order_stats.median, "nanmedian": order_stats.nanmedian,
    "mode": order_stats.mode, "quantile": order_stats.quantile, "nanquantile": order_stats.nanquantile,
    "unique_consecutive": sort.unique_consecutive, "bincount": counting.bincount, "histc": counting.histc,
    "histogram": counting.histogram, "cumprod": scan.cumprod, "cummax": scan.cummax, "cummin": scan.cummin,
    "logcumsumexp": scan.logcumsumexp, "diff": scan.diff, "count_nonzero": statistics.count_nonzero,
    "nansum": statistics.nansum, "nanmean": statistics.nanmean, "aminmax": statistics.aminmax,
    # building, selecting, rearranging
    "repeat_interleave": selection.repeat_interleave, "take": selection.take,
    "take_along_dim": selection.take_along_dim, "index_select": selection.index_select,
    "masked_select": selection.masked_select, "index_copy": selection.index_copy,
    "index_copy_": selection.index_copy_, "swapaxes_": lambda x, a, b: x.transpose_(a, b),
    "swapdims_": lambda x, a, b: x.transpose_(a, b), "diag": diagonal.diag,
    "diagonal": diagonal.diagonal, "diag_embed": diagonal.diag_embed, "diagflat": diagonal.diagflat,
    "trace": diagonal.trace, "movedim": reorder.movedim, "moveaxis": reorder.movedim, "swapaxes": reorder.swapaxes,
    "swapdims": reorder.swapdims, "tensor_split": reorder.tensor_split, "hsplit": reorder.hsplit,
    "vsplit": reorder.vsplit, "dsplit": reorder.dsplit, "unflatten": reorder.unflatten, "rot90": reorder.rot90,
    # products and linear algebra
    "outer": products.outer, "ger": products.outer, "dot": products.dot, "vdot": products.vdot,
    "inner": products.inner, "cross": products.cross, "kron": products.kron, "det": determinant.det,
    "logdet": determinant.logdet, "slogdet": determinant.slogdet, "inverse": solve.inv, "pinverse": solve.pinverse,
    "matrix_power": matrix_functions.matrix_power, "cholesky": decompositions.torch_cholesky,
    "qr": torch_qr, "svd": decompositions.torch_svd,
}  # fmt: skip

# The methods with an in-place form ``name_`` (PyTorch's).
IN_PLACE = ("tan asin acos atan arcsin arccos arctan atan2 arctan2 sinh cosh asinh acosh atanh arcsinh arccosh "
            "arctanh hypot xlogy erf erfc erfinv lgamma digamma polygamma logit clip lerp addcmul addcdiv copysign "
            "nan_to_num sinc deg2rad rad2deg fix sgn heaviside float_power true_divide i0 cumprod clamp_min "
            "clamp_max divide multiply subtract negative absolute").split()  # fmt: skip


def _method(name: str, fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``x.{name}(...)`` is ``mt.{name}(x, ...)``." + (f" {fn.__doc__}" if fn.__doc__ else "")
    return method


def _in_place(name: str, fn):
    def method(self, *args, **kwargs):
        with no_grad():
            result = fn(self.detach(), *[a.detach() if isinstance(a, Tensor) else a for a in args], **kwargs)
        inplace.check_castable(self, result.dtype, f"{name}_")
        if result.shape != self.shape:
            raise RuntimeError(f"{name}_: the result of shape {result.shape} does not fit the tensor's shape "
                               f"{self.shape}")  # fmt: skip
        tensors = [a for a in args if isinstance(a, Tensor)]  # (the operands a gradient may flow to)

        def update(array, *unused):
            array[...] = result._data.astype(array.dtype, copy=False)

        def recompute(old, *others):
            given = iter(others)
            return fn(old, *[next(given) if isinstance(a, Tensor) else a for a in args], **kwargs)

        return inplace.apply_inplace(self, f"{name}_", update, recompute, *tensors)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"``x.{name}(...)`` written into x (recorded in the graph when it takes part in one)."
    return method


class FunctionMethods:
    """Tensor's methods of this file (a method table, see the module docstring)."""


for _name, _fn in METHODS.items():
    setattr(FunctionMethods, _name, _method(_name, _fn))
for _name in IN_PLACE:
    setattr(FunctionMethods, f"{_name}_", _in_place(_name, METHODS[_name]))
