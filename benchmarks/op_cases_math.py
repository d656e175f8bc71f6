"""Cases for the math ops: elementwise functions (trigonometric, hyperbolic, special), binary
ops and their aliases, and the reductions and scans beyond op_cases.py's.

Inputs stay inside each op's domain: ``unit`` in (-0.9, 0.9) for acos, asin, atanh and
erfinv; ``above_one`` for acosh; ``positive`` for logs, gamma functions and float powers.
"""

from __future__ import annotations

import numpy as np
from op_inputs import F32, Case, distinct, near_one, normal, normal_pair, positive, uniform, with_divisor

unit = uniform(-0.9, 0.9)
above_one = uniform(1.5, 3.0)
open_unit = uniform(0.05, 0.95)  # probabilities, for logit
small = uniform(-1.2, 1.2)  # away from tan's poles


def _addc(rng, r, c):
    """x, t1, t2 (r, c): t2 in (0.5, 2) so that t1 / t2 is tame."""
    return *normal_pair(rng, r, c), rng.uniform(0.5, 2.0, (r, c)).astype(F32)


def _base_exponent(rng, r, c):
    """A positive base and an exponent in (-2, 2) (float_power)."""
    return rng.uniform(0.5, 2.0, (r, c)).astype(F32), rng.uniform(-2.0, 2.0, (r, c)).astype(F32)


def _xlogy(rng, r, c):
    """x (r, c) and a positive y."""
    return rng.standard_normal((r, c), dtype=F32), rng.uniform(0.5, 2.0, (r, c)).astype(F32)


def _with_nans(rng, r, c):
    """x with ~10% NaN (what the nan-reductions skip)."""
    x = rng.standard_normal((r, c), dtype=F32)
    x[rng.random((r, c)) < 0.1] = np.nan
    return (x,)


def _distinct_with_nans(rng, r, c):
    """distinct x with ~10% NaN (nanmedian, nanquantile)."""
    (x,) = distinct(rng, r, c)
    x[rng.random((r, c)) < 0.1] = np.nan
    return (x,)


def _var_mean(lib, F, x):
    var, mean = lib.var_mean(x, -1)
    return var + mean


def _std_mean(lib, F, x):
    std, mean = lib.std_mean(x, -1)
    return std + mean


def _aminmax(lib, F, x):
    low, high = lib.aminmax(x, dim=-1)
    return low + high


CASES = [
    # elementwise, unary
    Case("absolute", "elementwise", normal, lambda lib, F, x: lib.absolute(x)),
    Case("negative", "elementwise", normal, lambda lib, F, x: lib.negative(x)),
    Case("sgn", "elementwise", normal, lambda lib, F, x: lib.sgn(x)),
    Case("fix", "elementwise", normal, lambda lib, F, x: lib.fix(x)),
    Case("clip", "elementwise", normal, lambda lib, F, x: lib.clip(x, -0.5, 0.5)),
    Case("clamp_min", "elementwise", normal, lambda lib, F, x: lib.clamp_min(x, -0.5)),
    Case("clamp_max", "elementwise", normal, lambda lib, F, x: lib.clamp_max(x, 0.5)),
    Case("nan_to_num", "elementwise", normal, lambda lib, F, x: lib.nan_to_num(x)),
    Case("deg2rad", "elementwise", normal, lambda lib, F, x: lib.deg2rad(x)),
    Case("rad2deg", "elementwise", normal, lambda lib, F, x: lib.rad2deg(x)),
    Case("tan", "elementwise", small, lambda lib, F, x: lib.tan(x)),
    Case("asin", "elementwise", unit, lambda lib, F, x: lib.asin(x)),
    Case("arcsin", "elementwise", unit, lambda lib, F, x: lib.arcsin(x)),
    Case("acos", "elementwise", unit, lambda lib, F, x: lib.acos(x)),
    Case("arccos", "elementwise", unit, lambda lib, F, x: lib.arccos(x)),
    Case("atan", "elementwise", normal, lambda lib, F, x: lib.atan(x)),
    Case("arctan", "elementwise", normal, lambda lib, F, x: lib.arctan(x)),
    Case("sinh", "elementwise", normal, lambda lib, F, x: lib.sinh(x)),
    Case("cosh", "elementwise", normal, lambda lib, F, x: lib.cosh(x)),
    Case("asinh", "elementwise", normal, lambda lib, F, x: lib.asinh(x)),
    Case("arcsinh", "elementwise", normal, lambda lib, F, x: lib.arcsinh(x)),
    Case("acosh", "elementwise", above_one, lambda lib, F, x: lib.acosh(x)),
    Case("arccosh", "elementwise", above_one, lambda lib, F, x: lib.arccosh(x)),
    Case("atanh", "elementwise", unit, lambda lib, F, x: lib.atanh(x)),
    Case("arctanh", "elementwise", unit, lambda lib, F, x: lib.arctanh(x)),
    Case("sinc", "elementwise", normal, lambda lib, F, x: lib.sinc(x)),
    Case("erf", "elementwise", normal, lambda lib, F, x: lib.erf(x)),
    Case("erfc", "elementwise", normal, lambda lib, F, x: lib.erfc(x)),
    Case("erfinv", "elementwise", unit, lambda lib, F, x: lib.erfinv(x)),
    Case("i0", "elementwise", normal, lambda lib, F, x: lib.i0(x)),
    Case("lgamma", "elementwise", positive, lambda lib, F, x: lib.lgamma(x)),
    Case("digamma", "elementwise", positive, lambda lib, F, x: lib.digamma(x)),
    Case("polygamma", "elementwise", positive, lambda lib, F, x: lib.polygamma(1, x)),
    Case("logit", "elementwise", open_unit, lambda lib, F, x: lib.logit(x)),
    # elementwise, binary and ternary
    Case("multiply", "elementwise", normal_pair, lambda lib, F, x, y: lib.multiply(x, y)),
    Case("subtract", "elementwise", normal_pair, lambda lib, F, x, y: lib.subtract(x, y)),
    Case("divide", "elementwise", with_divisor, lambda lib, F, x, y: lib.divide(x, y)),
    Case("true_divide", "elementwise", with_divisor, lambda lib, F, x, y: lib.true_divide(x, y)),
    Case("atan2", "elementwise", normal_pair, lambda lib, F, y, x: lib.atan2(y, x)),
    Case("arctan2", "elementwise", normal_pair, lambda lib, F, y, x: lib.arctan2(y, x)),
    Case("hypot", "elementwise", normal_pair, lambda lib, F, x, y: lib.hypot(x, y)),
    Case("copysign", "elementwise", normal_pair, lambda lib, F, x, y: lib.copysign(x, y)),
    Case("logaddexp", "elementwise", normal_pair, lambda lib, F, x, y: lib.logaddexp(x, y)),
    Case("logaddexp2", "elementwise", normal_pair, lambda lib, F, x, y: lib.logaddexp2(x, y)),
    Case("xlogy", "elementwise", _xlogy, lambda lib, F, x, y: lib.xlogy(x, y)),
    Case("float_power", "elementwise", _base_exponent, lambda lib, F, x, y: lib.float_power(x, y)),
    Case("lerp", "elementwise", normal_pair, lambda lib, F, x, y: lib.lerp(x, y, 0.3)),
    Case("addcmul", "elementwise", _addc, lambda lib, F, x, a, b: lib.addcmul(x, a, b, value=0.5)),
    Case("addcdiv", "elementwise", _addc, lambda lib, F, x, a, b: lib.addcdiv(x, a, b, value=0.5)),
    # reductions and scans
    Case("aminmax(dim=-1)", "reduction", normal, _aminmax),
    Case("var_mean(dim=-1)", "reduction", normal, _var_mean),
    Case("std_mean(dim=-1)", "reduction", normal, _std_mean),
    Case("nansum", "reduction", _with_nans, lambda lib, F, x: lib.nansum(x, -1)),
    Case("nanmean", "reduction", _with_nans, lambda lib, F, x: lib.nanmean(x, -1)),
    Case("median(dim=-1)", "reduction", distinct, lambda lib, F, x: lib.median(x, -1)[0]),
    Case("nanmedian(dim=-1)", "reduction", _distinct_with_nans, lambda lib, F, x: lib.nanmedian(x, -1)[0]),
    Case("quantile(dim=-1)", "reduction", distinct, lambda lib, F, x: lib.quantile(x, 0.3, dim=-1)),
    Case("nanquantile(dim=-1)", "reduction", _distinct_with_nans, lambda lib, F, x: lib.nanquantile(x, 0.3, dim=-1)),
    Case("kthvalue(dim=-1)", "reduction", distinct, lambda lib, F, x: lib.kthvalue(x, 3, -1)[0]),
    # distinct values (each row's mode is its smallest): which of several equal values PyTorch's mode
    # returns the index of is unspecified (the last one in short rows, any one in long rows)
    Case("mode(dim=-1)", "reduction", distinct, lambda lib, F, x: lib.mode(x, -1)[0]),
    Case("cumprod", "reduction", near_one, lambda lib, F, x: lib.cumprod(x, -1)),
    Case("cummax", "reduction", distinct, lambda lib, F, x: lib.cummax(x, -1)[0]),
    Case("cummin", "reduction", distinct, lambda lib, F, x: lib.cummin(x, -1)[0]),
    Case("logcumsumexp", "reduction", normal, lambda lib, F, x: lib.logcumsumexp(x, -1)),
    Case("diff", "reduction", normal, lambda lib, F, x: lib.diff(x, dim=-1)),
]
