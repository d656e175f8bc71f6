"""Call forms PyTorch accepts that course code uses (found by scripts/measure_coverage.py): ``size=`` for
the factories, ``axis=`` for cat / stack / chunk, the memory attributes (``data_ptr``, ``element_size``,
``itemsize``, ``nbytes``) and ``torch.version`` under the switch; each as PyTorch answers it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_size(name):
    for size in ((2, 3), [4]):
        assert getattr(mt, name)(size=size).shape == tuple(getattr(torch, name)(size=size).shape)
    with pytest.raises(TypeError, match=f"{name}\\(\\) got the sizes both positionally"):
        getattr(mt, name)(2, size=(3,))


def test_axis_is_an_alias_of_dim():
    a = np.arange(6.0).reshape(2, 3)
    for fn in ("cat", "stack"):
        ours = getattr(mt, fn)([mt.tensor(a), mt.tensor(a)], axis=1)
        theirs = getattr(torch, fn)([torch.tensor(a), torch.tensor(a)], axis=1)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        with pytest.raises(TypeError, match=f"{fn}\\(\\) got both dim=1 and its alias axis=0"):
            getattr(mt, fn)([mt.tensor(a)], 1, axis=0)
    pieces = mt.tensor(a).chunk(3, axis=1)
    assert [p.shape for p in pieces] == [tuple(p.shape) for p in torch.tensor(a).chunk(3, axis=1)]


def test_memory_attributes_as_pytorch():
    for dtype, tdtype in ((mt.float32, torch.float32), (mt.float64, torch.float64), (mt.int64, torch.int64)):
        ours, theirs = mt.zeros(3, 4, dtype=dtype), torch.zeros(3, 4, dtype=tdtype)
        assert (ours.element_size(), ours.itemsize, ours.nbytes) == (
            theirs.element_size(), theirs.itemsize, theirs.nbytes,
        )  # fmt: skip
    x = mt.randn(3, 4)
    assert x.data_ptr() == x.view(12).data_ptr() == x[0].data_ptr() != x[1].data_ptr()
    embedding, head = nn.Embedding(5, 3), nn.Linear(3, 5, bias=False)
    head.weight = embedding.weight  # weight tying, checked as LLMs-from-scratch checks it
    assert head.weight.data_ptr() == embedding.weight.data_ptr() != nn.Linear(3, 5).weight.data_ptr()


def test_torch_version_under_the_switch():
    code = (
        "import minitensor.compat; minitensor.compat.install()\n"
        "import torch, torch.version\n"
        "from torch.version import cuda\n"
        "print(torch.version.cuda, cuda, torch.version.__version__ == torch.__version__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["None", "None", "True"]
