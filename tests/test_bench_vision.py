"""benchmarks/bench_vision.py's logic: the report's verdicts, every layer case computes what PyTorch
computes, the LeNet-5 and ResNet training steps run on minitensor and, from PyTorch's weights, take
the same steps as PyTorch, and the peak memory measure sees an allocation (the timing is not run)."""

from __future__ import annotations

import importlib.util
import mmap
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


def row(name: str, family: str, mt_s: float, torch_s: float, agree: bool = True) -> dict:
    return {"name": name, "family": family, "batch": 8, "mt": mt_s, "torch": torch_s, "spread": (0.5, 2.5),
            "agree": agree}  # fmt: skip


def test_report_gives_the_geometric_mean_of_the_layers_and_the_training_and_memory_verdicts(bench) -> None:
    lenet, resnet = bench.TRAININGS
    rows = [row(bench.CASES[0].name, "conv", 2e-6, 1e-6), row(bench.CASES[1].name, "conv", 1e-6, 4e-6, agree=False),
            row(bench.CASES[2].name, "conv", 3e-6, 1e-6), row(lenet.name, "train", 9e-3, 1e-2),
            row(resnet.name, "train", 1.1e-2, 1e-2)]  # fmt: skip
    memory = {"minitensor": [50 * 2**20, 70 * 2**20, 60 * 2**20], "torch": [20 * 2**20, 20 * 2**20, 30 * 2**20]}
    text = bench.report(rows, memory)
    assert "geometric mean 1.14 over 3 cases" in text  # (2 * 0.25 * 3) ** (1/3), the training rows apart
    assert "- target: geometric mean <= 1.0: NOT met" in text
    assert f"- target: no case above 2.0x: NOT met ({bench.CASES[2].name} at batch 8: 3.00)" in text
    assert "0.25 DIFFERS" in text and "0.50-2.50" in text
    assert f"- target: {lenet.name} <= 0.8x: NOT met (0.90)" in text
    assert f"- target: {resnet.name} <= 1.2x: met (1.10)" in text
    assert f"- target: {resnet.name} peak memory <= 2.0x: NOT met (minitensor 60.0 MB, PyTorch 20.0 MB, 3.00x; " \
           "per process pair 2.00-3.50)" in text  # fmt: skip


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


@pytest.mark.parametrize("index", [0, 1], ids=["lenet5", "resnet"])
def test_the_training_steps_learn_and_match_torch(bench, torch, index) -> None:
    training = bench.TRAININGS[index]._replace(batch=8)
    x, labels = bench.batch(training, seed=1)
    theirs, ours = bench.copied_model(training)
    mt_step, mt_params = bench.make_training_step(mt, ours, x, labels)
    torch_step, torch_params = bench.make_training_step(torch, theirs, x, labels)
    assert bench.same_training_step(mt_step, mt_params, torch_step, torch_params)
    losses = [(mt_step().item(), torch_step().item()) for _ in range(4)]
    assert np.allclose(*zip(*losses), rtol=1e-4)
    assert losses[-1][0] < losses[0][0]  # the same batch five times: the loss falls


def test_the_resnet_has_the_cifar_layout(bench) -> None:
    model = bench.RESNET.model(mt.nn)
    convs = [m for m in model.modules() if isinstance(m, mt.nn.Conv2d)]
    assert [c.out_channels for c in convs if c.kernel_size == (3, 3)] == [16] + [16] * 4 + [32] * 4 + [64] * 4
    assert [(c.in_channels, c.out_channels, c.stride) for c in convs if c.kernel_size == (1, 1)] == [
        (16, 32, (2, 2)), (32, 64, (2, 2))]  # fmt: skip
    assert sum(isinstance(m, mt.nn.BatchNorm2d) for m in model.modules()) == len(convs)


def test_step_peak_bytes_sees_what_a_step_allocates(bench) -> None:
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("the peak memory is read from Linux's /proc")
    size = 64 * 2**20

    def step() -> None:  # fresh pages, touched one by one (np.ones could reuse memory malloc keeps resident)
        pages = mmap.mmap(-1, size)
        for offset in range(0, size, mmap.PAGESIZE):
            pages[offset] = 1
        pages.close()

    peak = bench.step_peak_bytes(step)
    assert 0.9 * size <= peak < 3 * size  # (minus what the step frees of the memory before it)
