"""The kernels' disk cache goes stale when any kernel file changes (kernels/cache.py)."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys

import numpy as np

import minitensor
from minitensor.kernels.runtime import cache, jit


def test_kernel_locators_stamp_with_every_kernel_file() -> None:
    numba = jit.load_numba()
    from numba.core import caching

    assert cache.install(numba)
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    first = impl._locator_classes[0]
    assert issubclass(first, cache._KernelStamp)
    # a kernel's locator gives the package stamp; a function elsewhere is left to numba's locators
    from minitensor.kernels import softmax

    kernel = softmax._softmax_block.py_func
    found = (c.from_function(kernel, inspect.getfile(kernel)) for c in impl._locator_classes)
    locator = next(loc for loc in found if loc is not None)  # as numba picks one
    assert isinstance(locator, cache._KernelStamp) and locator.get_source_stamp() == cache.kernels_stamp()
    assert first.from_function(test_kernel_locators_stamp_with_every_kernel_file, __file__) is None


_RUN = """
import numpy as np, minitensor as mt
from minitensor.kernels import softmax
x = np.array([[0.0, 1.0, 2.0]], np.float32)
print(float(softmax.softmax_forward(x, -1)[0, 2]))
"""


def test_a_change_in_a_called_kernel_file_recompiles_its_callers(tmp_path) -> None:
    """Copy the package, fill the cache, then change _exp.py (called by softmax.py's kernels): the
    softmax kernel must see the change, not load its old compiled code from the cache."""
    package = tmp_path / "minitensor"
    shutil.copytree(os.path.dirname(minitensor.__file__), package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    command = [sys.executable, "-c", _RUN]  # (in tmp_path: "python -c" puts the working folder first)
    run = lambda: subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)  # noqa: E731
    first = run()
    assert first.returncode == 0, first.stderr
    assert (package / "kernels" / "__pycache__").is_dir()  # the copy was imported and its kernels cached
    np.testing.assert_allclose(float(first.stdout), np.exp(2) / np.exp([0, 1, 2]).sum(), rtol=1e-6)
    exp_file = package / "kernels" / "_exp.py"
    source = exp_file.read_text()
    # a wrong float32 exp, 1 everywhere: the softmax of any row becomes uniform
    marker = '"""exp(v) for a float32 ``v <= 0`` (see the module docstring), as float32."""\n'
    changed = source.replace(marker, marker + "    return np.float32(1.0)\n", 1)
    assert changed != source
    exp_file.write_text(changed)
    second = run()
    assert second.returncode == 0, second.stderr
    assert abs(float(second.stdout) - 1 / 3) < 1e-6  # the softmax kernel was compiled again with the changed exp
