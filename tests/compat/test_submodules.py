"""Under the switch every minitensor submodule is importable under its torch name, whatever minitensor
had imported before ``install()``: the very same module object."""

from __future__ import annotations

import textwrap
from pathlib import Path


def test_every_submodule_maps_to_its_torch_name(tmp_path: Path, run_python) -> None:
    path = tmp_path / "check.py"
    path.write_text(
        textwrap.dedent(
            """
            import importlib, pkgutil, sys
            from minitensor.compat._install import _PACKAGES
            assert "minitensor.utils.benchmark" not in sys.modules  # not imported by minitensor itself
            import minitensor.compat
            minitensor.compat.install()
            import torch.utils.benchmark as benchmark  # found on import
            import minitensor.utils.benchmark
            assert benchmark is minitensor.utils.benchmark
            from torch.utils.benchmark import Timer
            assert Timer is minitensor.utils.benchmark.Timer
            import torch.autograd.profiler, torch.testing
            assert torch.autograd.profiler.profile is minitensor.autograd.profiler.profile
            assert torch.testing.assert_close is minitensor.testing.assert_close
            count = 0
            for package in _PACKAGES:
                root = importlib.import_module("minitensor." + package)
                for info in pkgutil.walk_packages(getattr(root, "__path__", []), root.__name__ + "."):
                    if ".tensorboard" in info.name:
                        continue  # needs the tensorboard package, as PyTorch's does
                    torch_name = "torch" + info.name[len("minitensor"):]
                    module = importlib.import_module(torch_name)
                    assert module is importlib.import_module(info.name), torch_name
                    assert module.__spec__.name == info.name  # the module keeps its own identity
                    count += 1
            try:
                import torch.utils.not_a_module
            except ModuleNotFoundError as e:
                assert "minitensor" in str(e)
            else:
                raise AssertionError("torch.utils.not_a_module imported")
            print("ok", count)
            """
        )
    )
    out = run_python([str(path)], cwd=tmp_path).stdout.split()
    assert out[0] == "ok" and int(out[1]) > 20


def test_torch_func_and_functorch_are_minitensor_func(tmp_path: Path, run_python) -> None:
    """Course code on function transforms imports them as torch.func or functorch: both give
    minitensor.func; functorch's deprecated make_functional says to use functional_call."""
    path = tmp_path / "transforms.py"
    path.write_text(
        textwrap.dedent(
            """
            import minitensor.compat
            minitensor.compat.install()
            import torch
            from torch.func import grad, vmap, functional_call
            import functorch
            import minitensor.func
            assert torch.func is minitensor.func and grad is minitensor.func.grad
            assert functorch.vmap is vmap and functorch.jacrev is minitensor.func.jacrev
            x = torch.tensor([1.0, 2.0, 3.0])
            print(vmap(grad(lambda v: (v ** 3).sum()), in_dims=0)(x.reshape(3, 1)).reshape(-1).tolist())
            try:
                functorch.make_functional(torch.nn.Linear(2, 2))
            except RuntimeError as e:
                print("refused:", "functional_call" in str(e))
            """
        )
    )
    out = run_python([str(path)], cwd=tmp_path).stdout.splitlines()
    assert out == ["[3.0, 12.0, 27.0]", "refused: True"]
