"""benchmarks/bench_ops.py's table logic: geometric mean, target verdicts, and every case runs on
minitensor (the timing itself is not run)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

FOLDER = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(FOLDER))
    spec = importlib.util.spec_from_file_location("bench_ops", FOLDER / "bench_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    for name in [n for n in sys.modules if n == "op_inputs" or n.startswith("op_cases")]:
        sys.modules.pop(name)


def test_report_prints_the_geometric_mean_and_the_verdicts(bench) -> None:
    cases = bench.CASES[:3]
    rows = [(cases[0], 2e-6, 1e-6, True), (cases[1], 1e-6, 4e-6, True), (cases[2], 3e-6, 1e-6, False)]
    text = bench.report("2^17", rows)
    assert "geometric mean 1.14 over 3 ops" in text  # (2 * 0.25 * 3) ** (1/3)
    assert "- target: geometric mean <= 1.0: NOT met" in text
    assert f"- target: no op above 2.0x: NOT met ({cases[2].name} 3.00)" in text
    assert "3.00 DIFFERS" in text
    tiny = bench.report("16x16", [(cases[1], 1e-6, 4e-6, True)])
    assert "- target: geometric mean <= 0.45: met" in tiny and "no op above" not in tiny


@pytest.mark.filterwarnings("ignore:.*deprecated:UserWarning")  # upsample*, as PyTorch's
@pytest.mark.parametrize("shape", [(16, 16), (32, 64)])
def test_every_case_runs_forward_and_backward_on_minitensor(bench, shape) -> None:
    names = [case.name for case in bench.CASES]
    assert len(names) == len(set(names)) >= 70
    for case in bench.CASES:
        rng = np.random.default_rng(0)
        arrays = case.inputs(rng, *shape)
        step, leaves = bench.make_step(case, mt, F, arrays, None)
        out = case.run(mt, F, *leaves)
        grad = rng.standard_normal(out.shape).astype(np.float32) if out.shape else None
        step, leaves = bench.make_step(case, mt, F, arrays, grad)
        step()
        assert any(t.grad is not None for t in leaves if t.requires_grad), case.name


@pytest.mark.parametrize("pattern", ["sum", "mean", "transposed"])
def test_gradient_patterns_leave_the_gradients_of_their_formula(bench, pattern) -> None:
    """``sum``/``mean``: as backward of ones (or 1/n); ``transposed``: as the same values contiguous."""
    cases = [c for c in bench.CASES if c.name in ("x * y", "gelu", "softmax", "matmul", "t()")]
    assert len(cases) == 5
    for case in cases:
        rng = np.random.default_rng(0)
        arrays = case.inputs(rng, 8, 16)
        out = case.run(mt, F, *bench._leaves(mt, arrays, case.constants))
        grad = rng.standard_normal(out.shape).astype(np.float32)
        expected = {"sum": np.ones_like(grad), "mean": np.full_like(grad, 1 / grad.size), "transposed": grad}[pattern]
        plain, plain_leaves = bench.make_step(case, mt, F, arrays, expected)
        patterned, leaves = bench.make_step(case, mt, F, arrays, grad, pattern)
        plain()
        patterned()
        for a, b in zip(plain_leaves, leaves):
            if a.requires_grad:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-7, err_msg=case.name)


def test_pattern_tables_name_the_pattern_and_its_targets(bench) -> None:
    case = bench.CASES[0]
    text = bench.report("2^17", [(case, 1.2e-6, 1e-6, True)], "sum")
    assert "the gradient as the 'sum' pattern makes it" in text
    assert "- target: geometric mean <= 0.8: NOT met" in text and "- target: no op above 1.3x: met" in text


# Public callables of ``mt`` and ``F`` that are not differentiable ops: creation, predicates and
# integer results, settings, I/O.
NOT_OPS = {
    *("arange", "empty", "empty_like", "eye", "full", "full_like", "ones", "ones_like", "zeros", "zeros_like"),
    *("rand", "rand_like", "randint", "randn", "randn_like", "randperm", "multinomial", "tensor", "from_numpy"),
    *("all", "any", "allclose", "equal", "isclose", "is_floating_point", "is_tensor", "logical_not", "nonzero"),
    *("numel", "argmax", "argmin", "argsort", "unique", "floor_divide", "one_hot", "device", "dtype", "load", "save"),
    *("result_type", "promote_types"),
    *("enable_grad", "no_grad", "set_grad_enabled", "is_grad_enabled", "get_default_dtype", "set_default_dtype"),
    *("is_anomaly_enabled", "is_anomaly_check_nan_enabled", "seed", "manual_seed", "initial_seed"),
    *("get_rng_state", "set_rng_state", "jit_disabled", "jit_enabled", "set_jit_enabled", "jit_waits", "set_jit_wait"),
    *("get_num_threads", "set_num_threads", "set_thread_policy", "thread_policy_enabled"),
    *("as_tensor", "linspace", "logspace", "randint_like", "finfo", "iinfo"),  # factories and limits
    *("set_printoptions", "get_printoptions", "printoptions"),
    # comparisons, predicates, logical and bitwise ops: bool or integer results
    *("eq", "ne", "not_equal", "lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal"),
    *("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"),
    *("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"),
    # counts, bins and positions: integer results, or float ones PyTorch gives no derivative for
    *("bincount", "histc", "histogram", "count_nonzero", "searchsorted", "bucketize"),
    *("tril_indices", "triu_indices", "unique_consecutive", "heaviside"),
}
SPELLED = {  # functions whose cases use the operator
    "add": "x + y",
    "sub": "x - y",
    "mul": "x * y",
    "div": "x / y",
    "pow": "x ** ",
    "matmul": "x @ w",
    "neg": "-x",
}


def test_every_public_differentiable_op_has_a_case(bench) -> None:
    import inspect
    import re
    import types

    text = "\n".join(inspect.getsource(case.run) + case.name for case in bench.CASES)
    public = {n for module in (mt, F) for n in dir(module) if n.islower() and not n.startswith("_")}
    ops = {n for n in public - NOT_OPS if callable(getattr(mt, n, None) or getattr(F, n, None))}
    ops -= {n for n in ops if isinstance(getattr(mt, n, None) or getattr(F, n), types.ModuleType)}
    missing = sorted(n for n in ops if not re.search(rf"\b{n}\(", text) and SPELLED.get(n, "\0") not in text)
    assert missing == [], f"ops without a case in benchmarks/op_cases*.py: {missing}"
    assert len(ops) > 80


def test_the_script_runs_end_to_end_on_one_op() -> None:
    import subprocess

    command = [sys.executable, str(FOLDER / "bench_ops.py"), "--only", "x + y", "--repeat", "1", "--sample-ms", "0.5"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True).stdout
    lines = out.splitlines()
    assert " CPUs; Python " in lines[0] and lines[1].startswith("at the start: load average")
    assert "| x + y | elementwise |" in out and "geometric mean" in out and "at the end: " in lines[-1]
