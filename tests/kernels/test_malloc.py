"""Memory reuse (minitensor/kernels/runtime/malloc.py): glibc's malloc keeps freed arrays for the next op
(counted in page faults, which do not depend on the machine's speed or load), and ``owned``."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from minitensor.kernels.runtime import malloc

resource = pytest.importorskip("resource")

_CODE = """
import resource, numpy as np, minitensor
from minitensor.kernels.runtime import malloc
x = np.ones((256, 512), np.float32)  # 512 KiB: above glibc's default mmap threshold
for _ in range(5):
    a, b = x.copy(), x.copy()
    del a, b
start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    a, b = x.copy(), x.copy()
    del a, b
print(malloc.TUNED, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start)
"""


def _faults(setting: str | None) -> tuple:
    env = {k: v for k, v in os.environ.items() if k != "MINITENSOR_MALLOC"}
    if setting is not None:
        env["MINITENSOR_MALLOC"] = setting
    out = subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    tuned, faults = out.stdout.split()
    return tuned == "True", int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings are Linux-only")
def test_freed_arrays_are_reused_without_page_faults() -> None:
    tuned, faults = _faults(None)
    if not tuned:
        pytest.skip("not glibc: nothing is set")
    assert faults < 50  # 100 arrays of 128 pages each: none come back as fresh pages
    untuned, default_faults = _faults("default")
    assert not untuned
    assert default_faults > 1000  # glibc's defaults: the pages are returned and fault again


def test_the_setting_can_be_left_alone(monkeypatch) -> None:
    monkeypatch.setenv("MINITENSOR_MALLOC", "default")
    assert malloc.tune_malloc() is False


def test_owned_tells_an_array_no_one_else_holds() -> None:
    """``owned(array, like, holders)``: the engine's question before a leaf keeps a gradient as it is."""
    like = np.zeros((2, 3), np.float32)
    assert malloc.owned(np.ones((2, 3), np.float32), like)  # a temporary: no one else has it
    kept = np.ones((2, 3), np.float32)
    assert malloc.owned(kept, like)  # the caller's one variable
    other = kept
    assert not malloc.owned(kept, like) and malloc.owned(kept, like, holders=2)  # a second holder
    del other
    assert not malloc.owned(kept.T.copy().T, like)  # a view (of a transposed copy)
    assert not malloc.owned(kept.astype(np.float64), like)  # another dtype
    assert not malloc.owned(np.ones(6, np.float32), like)  # another shape
    assert not malloc.owned(1.0, like)  # not an array
