"""benchmarks/bench_vision.py's logic: the report's verdicts, and the LeNet-5 training step runs on
minitensor and, from PyTorch's weights, takes the same step as PyTorch (the timing is not run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt

FOLDER = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(FOLDER))
    spec = importlib.util.spec_from_file_location("bench_vision", FOLDER / "bench_vision.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def row(bench, case, mt_s: float, torch_s: float, agree: bool = True) -> dict:
    return {"case": case, "batch": 8, "mt": mt_s, "torch": torch_s, "spread": (0.5, 2.5), "agree": agree}


def test_report_gives_the_geometric_mean_of_the_layers_and_the_lenet_verdict(bench) -> None:
    lenet = bench.Case("LeNet-5 training step, 28x28", "train", (1, 28, 28), bench.lenet5)
    rows = [row(bench, bench.CASES[0], 2e-6, 1e-6), row(bench, bench.CASES[1], 1e-6, 4e-6, agree=False),
            row(bench, bench.CASES[2], 3e-6, 1e-6), row(bench, lenet, 9e-3, 1e-2)]  # fmt: skip
    text = bench.report(rows)
    assert "geometric mean 1.14 over 3 cases" in text  # (2 * 0.25 * 3) ** (1/3), the LeNet row apart
    assert "- target: geometric mean <= 1.0: NOT met" in text
    assert f"- target: no case above 2.0x: NOT met ({bench.CASES[2].name} at batch 8: 3.00)" in text
    assert "0.25 DIFFERS" in text and "0.50-2.50" in text
    assert "- target: LeNet-5 step <= 0.8x: NOT met (0.90)" in text


def test_every_layer_case_runs_and_agrees_with_torch(bench, torch) -> None:
    torch.set_num_threads(1)
    for case in bench.CASES:
        x = np.random.default_rng(0).standard_normal((2, *case.image)).astype(np.float32)
        theirs, ours = case.layer(torch.nn), case.layer(mt.nn)
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        grad = np.ones(tuple(theirs(torch.tensor(x)).shape), np.float32)
        mt_step, mt_leaves = bench.make_step(mt, ours, x, grad)
        torch_step, torch_leaves = bench.make_step(torch, theirs, x, grad)
        assert bench.same_results(mt_step, mt_leaves, torch_step, torch_leaves), case.name


def test_the_lenet_step_learns_and_matches_torch(bench, torch) -> None:
    rng = np.random.default_rng(1)
    x, labels = rng.standard_normal((8, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 8)
    torch.manual_seed(0)
    theirs, ours = bench.lenet5(torch.nn), bench.lenet5(mt.nn)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    mt_step, _ = bench.make_training_step(mt, ours, x, labels)
    torch_step, _ = bench.make_training_step(torch, theirs, x, labels)
    losses = [(mt_step().item(), torch_step().item()) for _ in range(5)]
    assert np.allclose(*zip(*losses), rtol=1e-4)
    assert losses[-1][0] < losses[0][0]  # the same batch five times: the loss falls
