"""Files written by PyTorch 2.13 itself (committed fixtures), read without PyTorch: these tests run
where PyTorch is not installed, and one runs in a process where ``import torch`` fails.

``fixtures/pytorch_2_13_checkpoint.pt`` is ``torch.save`` of: a Sequential(Linear(3, 4), ReLU,
Linear(4, 2)) state dict whose parameter i held ``arange(n).reshape(shape) / 10 - i`` before one Adam
step (lr 0.01) on ``model(x).pow(2).mean()``, x = arange(6).reshape(2, 3); that Adam's state dict;
views of ``base = arange(24).reshape(4, 6) / 8`` (rows 1:3, columns 2:5, the transpose); arange(6) / 3
in bfloat16; int64, bool and float16 tensors; a torch.Size; plain values.
``fixtures/pytorch_2_13_module.pt`` is ``torch.save`` of that model itself.
"""

from __future__ import annotations

import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import serialization

FIXTURES = Path(__file__).parent / "fixtures"
CHECKPOINT = FIXTURES / "pytorch_2_13_checkpoint.pt"
MODULE = FIXTURES / "pytorch_2_13_module.pt"


def _model_before_the_step() -> nn.Sequential:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    with mt.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(mt.arange(p.numel(), dtype=mt.float32).reshape(p.shape) / 10 - i)
    return model


def to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 (the top 16 bits, rounded to nearest even, as PyTorch converts) -> float32."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def test_pytorchs_checkpoint_loads_with_its_types_and_values():
    checkpoint = mt.load(CHECKPOINT)
    assert list(checkpoint) == ["model", "optimizer", "views", "bf16", "ints", "flags", "half", "size", "meta"]
    base = np.arange(24, dtype=np.float32).reshape(4, 6) / 8
    views = checkpoint["views"]
    assert type(views) is OrderedDict and list(views) == ["base", "rows", "cols", "t"]
    for key, expected in (("base", base), ("rows", base[1:3]), ("cols", base[:, 2:5]), ("t", base.T)):
        np.testing.assert_array_equal(views[key].numpy(), expected)
        assert np.shares_memory(views[key].numpy(), views["base"].numpy())
    assert checkpoint["bf16"].dtype == mt.float32  # k/3 in bfloat16, exactly
    np.testing.assert_array_equal(checkpoint["bf16"].numpy(), to_bfloat16(np.arange(6, dtype=np.float32) / 3))
    assert checkpoint["ints"].dtype == mt.int64 and checkpoint["ints"].tolist() == [0, 1, 2, 3, 4]
    assert checkpoint["flags"].tolist() == [True, False] and checkpoint["half"].dtype == mt.float16
    assert checkpoint["size"] == (4, 6)
    assert checkpoint["meta"] == {"epoch": 3, "name": "written by PyTorch 2.13", "pair": (1, 2.5), "list": [None, True]}


def test_pytorchs_adam_state_matches_minitensors_gradient_and_carries_on():
    """The saved Adam moments are PyTorch's gradient; minitensor's gradient of the same loss equals it,
    and minitensor's Adam takes the checkpoint on."""
    checkpoint = mt.load(CHECKPOINT)
    before = _model_before_the_step()
    x = mt.arange(6, dtype=mt.float32).reshape(2, 3)
    before(x).pow(2).mean().backward()
    state = checkpoint["optimizer"]["state"]
    for i, p in enumerate(before.parameters()):
        assert state[i]["step"].item() == 1.0
        np.testing.assert_allclose(state[i]["exp_avg"].numpy(), 0.1 * p.grad.numpy(), rtol=1e-6)  # (1 - beta1) g
        step = -0.01 * np.sign(p.grad.numpy())  # Adam's first step: lr * sign(g)
        after = checkpoint["model"][list(checkpoint["model"])[i]].numpy()
        np.testing.assert_allclose(after - p.detach().numpy(), step, atol=1e-6)
    model = _model_before_the_step()
    model.load_state_dict(checkpoint["model"])
    opt = mt.optim.Adam(model.parameters(), lr=0.5)
    opt.load_state_dict(checkpoint["optimizer"])
    first = next(iter(model.parameters()))
    assert opt.param_groups[0]["lr"] == 0.01 and opt.state[first]["step"] == 1  # (state is keyed by parameter)


def test_pytorchs_whole_module_loads_for_allowed_classes():
    with pytest.raises(ValueError, match="torch.nn.modules.container.Sequential.*safe_globals"):
        mt.load(MODULE)
    with serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
        model = mt.load(MODULE)
    x = mt.arange(6, dtype=mt.float32).reshape(2, 3)
    reference = _model_before_the_step()
    reference.load_state_dict(mt.load(CHECKPOINT)["model"])
    np.testing.assert_array_equal(model(x).numpy(), reference(x).numpy())
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]


def test_reading_pytorchs_files_needs_no_pytorch():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # import torch now fails
        "import minitensor as mt\n"
        f"checkpoint = mt.load({str(CHECKPOINT)!r})\n"
        "with mt.serialization.safe_globals([mt.nn.Sequential, mt.nn.Linear, mt.nn.ReLU]):\n"
        f"    model = mt.load({str(MODULE)!r})\n"
        "print(sorted(checkpoint['model']), type(model).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                          cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['0.bias', '0.weight', '2.bias', '2.weight'] Sequential"
