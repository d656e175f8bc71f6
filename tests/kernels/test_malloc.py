"""glibc's malloc keeps freed arrays for the next op (minitensor/kernels/runtime/malloc.py): counted in page faults,
which do not depend on the machine's speed or load."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
    from minitensor.kernels.runtime import malloc

    monkeypatch.setenv("MINITENSOR_MALLOC", "default")
    assert malloc.tune_malloc() is False
