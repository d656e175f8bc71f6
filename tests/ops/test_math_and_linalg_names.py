"""The names of PyTorch's math, reductions, building and linear-algebra families that course code reaches
for: each exists where PyTorch has it (``mt.<name>``, ``Tensor.<name>``, ``mt.linalg.<name>``) and gives
PyTorch's values, shapes and dtypes on small inputs (one table row per call; PyTorch is the oracle).

Gradients are checked per family, in float64 and to second order, in the test file of each op module
(tests/ops/test_trig.py, test_special.py, test_solve.py, ...).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")

POINTWISE = """tan asin acos atan arcsin arccos arctan atan2 arctan2 sinh cosh asinh acosh atanh arcsinh arccosh arctanh
hypot logaddexp logaddexp2 xlogy erf erfc erfinv lgamma digamma polygamma sigmoid logit clamp clip lerp addcmul
addcdiv fmod remainder copysign nan_to_num sinc deg2rad rad2deg frac trunc fix sign sgn signbit heaviside float_power
true_divide rsqrt square exp2 log2 log10 i0""".split()
REDUCTIONS = """sort argsort kthvalue median nanmedian mode quantile nanquantile unique unique_consecutive bincount
histc histogram cumprod cummax cummin logcumsumexp diff prod std_mean var_mean count_nonzero searchsorted bucketize
nansum nanmean amax amin aminmax""".split()
BUILDING = """repeat_interleave diag diagonal diag_embed diagflat outer ger dot vdot inner cross kron cdist meshgrid
cartesian_prod combinations tril_indices triu_indices block_diag take take_along_dim index_select masked_select
masked_scatter index_add index_copy index_fill movedim moveaxis swapaxes swapdims tensor_split hsplit vsplit dsplit
flatten unflatten rot90 trace tensordot chain_matmul""".split()
LINALG = """norm vector_norm matrix_norm inv solve det slogdet cholesky qr eigh eigvalsh svd svdvals pinv lstsq
matrix_rank matrix_power solve_triangular cholesky_ex inv_ex cross multi_dot""".split()


@pytest.mark.parametrize("name", POINTWISE + REDUCTIONS + BUILDING)
def test_every_name_exists_where_pytorch_has_it(name):
    assert hasattr(torch, name), name  # (the list itself is PyTorch's)
    assert callable(getattr(mt, name, None)), f"mt.{name} is missing"
    if hasattr(torch.Tensor, name):
        assert callable(getattr(mt.Tensor, name, None)), f"Tensor.{name} is missing"
    if hasattr(torch.Tensor, name + "_"):
        assert callable(getattr(mt.Tensor, name + "_", None)), f"Tensor.{name}_ is missing"


@pytest.mark.parametrize("name", LINALG)
def test_every_linalg_name_exists(name):
    assert hasattr(torch.linalg, name)
    assert callable(getattr(mt.linalg, name, None)), f"mt.linalg.{name} is missing"


# ----------------------------------------------------------------------------------- the oracle table
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
Y = rng.standard_normal((3, 4))
POS = rng.uniform(0.2, 2.0, (3, 4))
UNIT = rng.uniform(-0.9, 0.9, (3, 4))
DISTINCT = rng.permutation(12).reshape(3, 4).astype(np.float64) / 3 - 1
TIES = np.array([[1.0, 3.0, 1.0, 2.0], [2.0, 2.0, 0.0, 5.0], [4.0, 4.0, 4.0, 1.0]])
WITH_NAN = np.where(np.eye(3, 4, dtype=bool), np.nan, X)
INTS = np.array([3, 0, 1, 1, 5, 3])
SQUARE = rng.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = SQUARE @ SQUARE.T + np.eye(3)
TALL = rng.standard_normal((5, 3))
V3 = rng.standard_normal((2, 3))
W3 = rng.standard_normal((2, 3))


def _lib(lib, value):
    """A table cell in the library: arrays become tensors of their dtype, lists and tuples recurse."""
    if isinstance(value, np.ndarray):
        return mt.tensor(value, dtype=value.dtype) if lib is mt else torch.tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_lib(lib, v) for v in value)
    if isinstance(value, dict):
        return {k: _lib(lib, v) for k, v in value.items()}
    return value


def _arrays(out):
    """An output (a tensor, or a tuple/list of them) as nested lists of NumPy arrays and numbers."""
    if isinstance(out, (tuple, list)):
        return [_arrays(o) for o in out]
    if isinstance(out, (mt.Tensor, torch.Tensor)):
        return out.detach().numpy() if isinstance(out, torch.Tensor) else out.numpy()
    return out


def _assert_same(ours, theirs, where: str):
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{where}: {len(ours)} vs {len(theirs)} outputs"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _assert_same(o, t, f"{where}[{i}]")
        return
    if not isinstance(theirs, np.ndarray):
        assert ours == theirs, where
        return
    assert ours.shape == theirs.shape, f"{where}: shape {ours.shape}, PyTorch's {theirs.shape}"
    assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype}, PyTorch's {theirs.dtype}"
    if theirs.dtype.kind == "f":
        tight = theirs.dtype == np.float64
        np.testing.assert_allclose(ours, theirs, rtol=1e-9 if tight else 2e-6, atol=1e-12 if tight else 1e-6,
                                   equal_nan=True, err_msg=where)  # fmt: skip
    else:
        np.testing.assert_array_equal(ours, theirs, err_msg=where)


def _signless(out):
    """Each array's absolute values (eigen- and singular vectors are defined up to sign)."""
    return [_signless(o) for o in out] if isinstance(out, list) else np.abs(out)


def _leading(out):
    """A full SVD's U (m, m), S and Vh (n, n) cut to their first min(m, n) columns / rows, signless (the others
    span the null spaces in no defined way)."""
    u, s, vh = out
    k = s.shape[-1]
    return [np.abs(u[..., :k]), s, np.abs(vh[..., :k, :]), u.shape, vh.shape]


# (name, positional arguments, keyword arguments[, a view of the outputs to compare]); "linalg." names
# are looked up in torch.linalg / mt.linalg.  The first argument is the tensor of the method form.
CASES = [
    *[(n, (UNIT,), {}) for n in ("tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh",
                                  "asinh", "atanh", "arcsinh", "arctanh", "erf", "erfc", "erfinv", "sigmoid", "sinc",
                                  "deg2rad", "rad2deg", "frac", "trunc", "fix", "sign", "sgn", "signbit", "square",
                                  "exp2", "i0", "lgamma", "digamma")],  # fmt: skip
    *[(n, (POS + 1,), {}) for n in ("acosh", "arccosh", "rsqrt", "log2", "log10")],
    ("logit", (POS / 3,), {}), ("logit", (POS / 3,), {"eps": 0.2}),
    ("polygamma", (2, POS), {}), ("lgamma", (-POS - 0.5,), {}), ("digamma", (-POS - 0.5,), {}),
    *[(n, (X, Y), {}) for n in ("atan2", "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign", "true_divide",
                                "fmod", "remainder")],  # fmt: skip
    ("xlogy", (X, POS), {}), ("xlogy", (np.array([0.0, 1.0, 0.0]), np.array([0.0, 2.0, np.nan])), {}),
    ("copysign", (X, -1.0), {}), ("float_power", (POS, Y), {}), ("float_power", (INTS, 2), {}),
    ("clamp", (X, -0.5, 0.5), {}), ("clip", (X, None, 0.3), {}),
    ("lerp", (X, Y, 0.3), {}), ("lerp", (X, Y, UNIT), {}),
    ("addcmul", (X, Y, UNIT), {"value": 0.5}), ("addcdiv", (X, Y, POS), {"value": -2}),
    ("nan_to_num", (np.array([np.nan, np.inf, -np.inf, 1.5]),), {}),
    ("nan_to_num", (np.array([np.nan, np.inf, -np.inf, 1.5]),), {"nan": 1.0, "posinf": 9.0, "neginf": -9.0}),
    ("heaviside", (np.array([-1.0, 0.0, 2.0, np.nan]), np.array([0.5])), {}),
    ("tan", (INTS,), {}), ("atan2", (INTS, INTS[::-1].copy()), {}), ("sgn", (INTS - 2,), {}),
    # sorting, order statistics, counting
    ("sort", (TIES,), {"dim": 0, "descending": True}), ("argsort", (TIES,), {"stable": True}),
    ("kthvalue", (DISTINCT, 2), {"dim": 0}), ("kthvalue", (DISTINCT, 3, 1, True), {}),
    ("median", (TIES,), {}), ("median", (TIES, 1), {}), ("median", (WITH_NAN, 0, True), {}),
    ("nanmedian", (WITH_NAN,), {}), ("nanmedian", (WITH_NAN, 1), {}),
    ("mode", (TIES,), {}), ("mode", (TIES, 0, True), {}),
    *[("quantile", (X, q, dim), {"keepdim": k, "interpolation": i}) for q in (0.3, np.array([0.0, 0.25, 1.0]))
      for dim, k in ((None, False), (1, True), (0, False)) for i in ("linear", "lower", "higher", "midpoint",
                                                                     "nearest")],  # fmt: skip
    ("nanquantile", (WITH_NAN, 0.4, 1), {}), ("quantile", (WITH_NAN, 0.4, 1), {}),
    ("unique", (TIES,), {"return_inverse": True, "return_counts": True}),
    ("unique", (TIES.astype(np.int64), True, True, True, 1), {}),
    ("unique_consecutive", (INTS,), {"return_inverse": True, "return_counts": True}),
    ("bincount", (INTS,), {"minlength": 8}), ("bincount", (INTS, POS.ravel()[:6]), {}),
    ("histc", (X,), {"bins": 5}), ("histc", (X, 4, -1, 1), {}),
    ("histogram", (X, 4), {}), ("histogram", (X, np.array([-2.0, 0.0, 0.5, 3.0])), {"density": True}),
    ("histogram", (X, 3), {"range": (-1.0, 1.0), "weight": POS}),
    ("searchsorted", (np.array([1.0, 2.0, 2.0, 5.0]), np.array([[2.0, 0.0], [6.0, 1.5]])), {}),
    ("searchsorted", (np.array([1.0, 2.0, 2.0, 5.0]), np.array([2.0, 3.0])), {"right": True, "out_int32": True}),
    ("searchsorted", (np.sort(X, 1), Y), {"side": "right"}),
    ("bucketize", (Y, np.array([-1.0, 0.0, 1.0])), {}), ("bucketize", (Y, np.array([-1.0, 0.0, 1.0])), {"right": True}),
    ("cumprod", (X, 1), {}), ("cumprod", (INTS, 0), {}), ("cummax", (TIES, 1), {}), ("cummin", (TIES, 0), {}),
    ("logcumsumexp", (X, 1), {}), ("diff", (X,), {}), ("diff", (X, 2, 0), {"prepend": Y, "append": X[:1]}),
    ("prod", (X, 1), {}), ("prod", (INTS,), {}),
    ("std_mean", (X,), {}), ("std_mean", (X, 1), {"correction": 0, "keepdim": True}), ("var_mean", (X, (0, 1)), {}),
    ("var_mean", (X, 0, False), {}),
    ("count_nonzero", (TIES - 1,), {}), ("count_nonzero", (TIES - 1, (0, 1)), {}), ("count_nonzero", (TIES - 1, 0), {}),
    ("nansum", (WITH_NAN,), {}), ("nansum", (WITH_NAN, 1, True), {}), ("nanmean", (WITH_NAN, 0), {}),
    ("amax", (TIES, 1), {}), ("amin", (TIES, (0, 1), True), {}),
    ("aminmax", (TIES,), {}), ("aminmax", (TIES,), {"dim": 0, "keepdim": True}),
    # building and selecting
    ("repeat_interleave", (X, 2), {}), ("repeat_interleave", (X, np.array([1, 0, 3]), 0), {}),
    ("repeat_interleave", (INTS,), {}),
    ("diag", (X[0],), {}), ("diag", (X, 1), {}), ("diag", (X[0], -2), {}),
    ("diagonal", (X,), {}), ("diagonal", (rng.standard_normal((2, 3, 4)), 1, 2, 0), {}),
    ("diag_embed", (X,), {}), ("diag_embed", (X, -1, 0, 2), {}), ("diagflat", (X[:2, :2], 1), {}),
    ("outer", (X[0], Y[1]), {}), ("ger", (X[0], Y[1]), {}), ("dot", (X[0], Y[0]), {}), ("vdot", (X[0], Y[0]), {}),
    ("inner", (X, Y), {}), ("inner", (X[0], np.array(2.0)), {}), ("cross", (V3, W3), {"dim": 1}),
    ("kron", (X[:2, :2], TALL), {}), ("cdist", (X, Y), {}), ("cdist", (X, Y, 1.0), {}), ("cdist", (X, Y, 3.0), {}),
    ("meshgrid", (X[0], Y[1, :3]), {"indexing": "ij"}), ("meshgrid", (X[0], Y[1, :3]), {"indexing": "xy"}),
    ("cartesian_prod", (X[0, :2], Y[0, :3], INTS[:2].astype(np.float64)), {}),
    ("combinations", (X[0],), {}), ("combinations", (X[0], 3, True), {}),
    ("tril_indices", (3, 4, 1), {}), ("triu_indices", (4, 3, -1), {}),
    ("block_diag", (X[:2, :2], Y[0], np.array(5.0)), {}),
    ("take", (X, np.array([[0, 11], [-1, 3]])), {}), ("take_along_dim", (X, np.array([[0], [3], [1]]), 1), {}),
    ("take_along_dim", (X, np.array([2, 7])), {}), ("index_select", (X, 1, np.array([3, 0, 3])), {}),
    ("masked_select", (X, X > 0), {}), ("masked_select", (X, np.array([True, False, True, False])), {}),
    ("masked_scatter", (X, X > 0, Y), {}), ("index_add", (X, 0, np.array([2, 0, 2]), Y), {"alpha": 2}),
    ("index_copy", (X, 1, np.array([3, 1]), Y[:, :2].copy()), {}), ("index_fill", (X, 1, np.array([0, 2]), -1.0), {}),
    ("movedim", (rng.standard_normal((2, 3, 4)), (0, 1), (2, 0)), {}), ("moveaxis", (X, 0, 1), {}),
    ("swapaxes", (X, 0, 1), {}), ("swapdims", (X, 1, 0), {}),
    ("tensor_split", (X, 3, 1), {}), ("tensor_split", (X, [1, 3], 1), {}), ("tensor_split", (X, np.array([1]), 0), {}),
    ("hsplit", (X, 2), {}), ("vsplit", (X, [1]), {}), ("dsplit", (rng.standard_normal((2, 2, 4)), 2), {}),
    ("flatten", (rng.standard_normal((2, 3, 4)), 1), {}), ("unflatten", (X, 1, (2, -1)), {}),
    ("rot90", (X,), {}), ("rot90", (X, -3, (1, 0)), {}), ("trace", (X,), {}), ("trace", (INTS[:4].reshape(2, 2),), {}),
    ("tensordot", (rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 2)), ([1, 2], [1, 0])), {}),
    ("tensordot", (X, Y.T.copy(), 1), {}),
    # linear algebra (torch.linalg), and the torch-level names
    ("linalg.inv", (SQUARE,), {}), ("linalg.solve", (SQUARE, X[:, :2].copy()), {}),
    ("linalg.solve", (SQUARE, X[0, :3].copy()), {"left": True}),
    ("linalg.solve", (SQUARE, X[:2, :3].copy()), {"left": False}),
    ("linalg.solve_triangular", (SQUARE, X[:, :2].copy()), {"upper": True}),
    ("linalg.solve_triangular", (SQUARE, X[:2, :3].copy()), {"upper": False, "left": False, "unitriangular": True}),
    ("linalg.det", (SQUARE,), {}), ("linalg.slogdet", (-SQUARE,), {}), ("det", (SQUARE,), {}), ("logdet", (SPD,), {}),
    ("linalg.cholesky", (SPD,), {}), ("linalg.cholesky", (SPD,), {"upper": True}), ("linalg.cholesky_ex", (SPD,), {}),
    ("linalg.qr", (TALL,), {}, _signless), ("linalg.qr", (TALL.T.copy(),), {"mode": "complete"}, _signless),
    ("linalg.qr", (TALL,), {"mode": "r"}, _signless),
    ("linalg.eigh", (SPD,), {}, _signless), ("linalg.eigvalsh", (SPD, "U"), {}),
    ("linalg.svd", (TALL,), {"full_matrices": False}, _signless), ("linalg.svd", (TALL.T.copy(),), {}, _leading),
    ("linalg.svdvals", (TALL,), {}), ("svd", (TALL,), {}, _signless), ("svd", (TALL,), {"some": False}, _leading),
    ("linalg.pinv", (TALL,), {}), ("linalg.pinv", (SPD,), {"hermitian": True}),
    ("linalg.lstsq", (TALL, X[:, :2].repeat(2, 0)[:5].copy()), {}),
    ("linalg.lstsq", (TALL, X[:, :2].repeat(2, 0)[:5].copy()), {"driver": "gelsd"}),
    ("linalg.matrix_rank", (np.ones((3, 4)),), {}), ("linalg.matrix_rank", (SPD,), {"hermitian": True}),
    ("linalg.matrix_power", (SQUARE, 3), {}), ("linalg.matrix_power", (SQUARE, -2), {}),
    ("linalg.matrix_power", (SQUARE, 0), {}), ("matrix_power", (INTS[:4].reshape(2, 2), 3), {}),
    *[("linalg.matrix_norm", (X,), {"ord": o}) for o in ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)],
    ("linalg.norm", (X,), {}), ("linalg.norm", (X, 3, 1), {}), ("linalg.norm", (X, "nuc"), {}),
    ("linalg.norm", (X[0], math.inf), {}), ("linalg.vector_norm", (X, 1.5, (0, 1)), {}),
    ("linalg.cross", (V3, W3), {}), ("linalg.multi_dot", ([X[0], Y.T.copy(), TALL[:3], V3[0]],), {}),
    ("linalg.inv_ex", (SQUARE,), {}), ("inverse", (SQUARE,), {}), ("pinverse", (TALL,), {}),
]  # fmt: skip


def _call(lib, name, args, kwargs, method: bool):
    args, kwargs = _lib(lib, args), _lib(lib, kwargs)
    if name.startswith("linalg."):
        return getattr(lib.linalg, name[len("linalg.") :])(*args, **kwargs)
    if method:
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(lib, name)(*args, **kwargs)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_shapes_and_dtypes_match_pytorch(case):
    name, args, kwargs = case[:3]
    view = case[3] if len(case) > 3 else (lambda out: out)
    theirs = view(_arrays(_call(torch, name, args, kwargs, method=False)))
    _assert_same(view(_arrays(_call(mt, name, args, kwargs, method=False))), theirs, name)
    first = args[0] if args else None
    if not name.startswith("linalg.") and isinstance(first, np.ndarray) and hasattr(torch.Tensor, name):
        _assert_same(view(_arrays(_call(mt, name, args, kwargs, method=True))), theirs, f"Tensor.{name}")
