"""The PyTorch switch: ``python -m minitensor.compat script.py`` and ``minitensor.compat.install()``.

Each case runs in a fresh Python process (the switch owns the name ``torch``, and
the test process may have imported the real PyTorch as an oracle).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


def script(tmp_path: Path, body: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_command_runs_a_script_like_python_does(tmp_path: Path, run_python) -> None:
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    path = script(
        tmp_path,
        """
        import sys
        import torch
        import minitensor
        import helper  # the script's folder comes first on sys.path
        print(__name__, sys.argv[1:], helper.VALUE, torch.tensor is minitensor.tensor)
        """,
    )
    out = run_python(["-m", "minitensor.compat", str(path), "--lr", "3"], cwd=tmp_path).stdout
    assert out.split() == ["__main__", "['--lr',", "'3']", "42", "True"]


def test_command_runs_a_module_and_reports_usage(tmp_path: Path, run_python) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "main.py").write_text(
        "import sys, torch\nprint(__name__, sys.argv[1:], torch.cuda.is_available())\n"
    )
    assert run_python(["-m", "minitensor.compat", "-m", "pkg.main", "x"], cwd=tmp_path).stdout.split() == [
        "__main__",
        "['x']",
        "False",
    ]
    done = run_python(["-m", "minitensor.compat"], cwd=tmp_path, check=False)
    assert done.returncode == 2 and "usage: python -m minitensor.compat script.py" in done.stderr
    done = run_python(["-m", "minitensor.compat", "missing.py"], cwd=tmp_path, check=False)
    assert done.returncode == 2 and "missing.py" in done.stderr


def test_submodules_resolve_to_minitensor(tmp_path: Path, run_python) -> None:
    path = script(
        tmp_path,
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.nn.init
        import torch.nn.utils
        import torch.optim
        import torch.optim.lr_scheduler
        import torch.utils.data
        from torch.utils.data.dataloader import DataLoader
        from torch.nn.modules.linear import Linear
        from torch import nn as nn2
        import minitensor as mt
        checks = [
            nn.Linear is mt.nn.Linear, nn2.Module is mt.nn.Module, F is mt.nn.functional,
            torch.nn.init is mt.nn.init, torch.nn.utils.clip_grad_norm_ is mt.nn.utils.clip_grad_norm_,
            torch.optim.AdamW is mt.optim.AdamW, torch.optim.lr_scheduler is mt.optim.lr_scheduler,
            torch.utils.data.DataLoader is DataLoader is mt.utils.data.DataLoader, Linear is mt.nn.Linear,
            torch.nn.modules.sparse.Embedding is mt.nn.Embedding, torch.nn.modules.module.Module is mt.nn.Module,
            torch.nn.modules.rnn.LSTM is nn.LSTM is mt.nn.LSTM, torch.nn.modules.rnn.GRU is mt.nn.GRU,
            torch.float32 == mt.float32, torch.long == mt.int64, isinstance(torch.zeros(1), torch.Tensor),
            torch.no_grad is mt.no_grad, torch.Size([2, 3]) == torch.zeros(2, 3).size(),
            __import__("torch.profiler").profiler is mt.profiler,
        ]
        print(all(checks), [i for i, ok in enumerate(checks) if not ok])
        """,
    )
    assert run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout.split()[0] == "True"


def test_cpu_answers_and_gpu_features_refused(tmp_path: Path, run_python) -> None:
    path = script(
        tmp_path,
        """
        import warnings
        import torch
        import torch.backends.cudnn
        import torch.cuda.amp
        from torch.distributed import init_process_group
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch.multiprocessing as tmp
        import torch.onnx
        from torch.utils.data.distributed import DistributedSampler

        assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
        assert not torch.cuda.is_bf16_supported() and not torch.backends.mps.is_available()
        assert not torch.distributed.is_available() and not torch.distributed.is_initialized()
        assert not torch.accelerator.is_available() and torch.accelerator.current_accelerator() is None
        assert torch.nn.modules.linear.NonDynamicallyQuantizableLinear is torch.nn.Linear
        torch.cuda.manual_seed(1); torch.cuda.manual_seed_all(1); torch.cuda.empty_cache()
        assert torch.cuda.memory_allocated() == 0 == torch.cuda.max_memory_allocated()
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cudnn.benchmark = True
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = torch.cuda.amp.GradScaler(enabled=True)   # as PyTorch without CUDA: warns, disables
            amp_scaler = torch.amp.GradScaler("cuda", enabled=True)
        assert len(caught) == 2 and all("CUDA is not available" in str(w.message) for w in caught)
        assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cpu_scaler = torch.amp.GradScaler("cpu")
        assert len(caught) == 1 and "no float16 training" in str(caught[0].message) and not cpu_scaler.is_enabled()
        quiet = torch.cuda.amp.GradScaler(enabled=False)
        for s in (scaler, amp_scaler, quiet):
            assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
        w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
        opt = torch.optim.SGD([w], lr=0.5)
        loss = (w * w).sum()
        assert scaler.scale(loss) is loss
        scaler.scale(loss).backward(); scaler.unscale_(opt); scaler.step(opt); scaler.update()
        assert w.tolist() == [0.0, 0.0], w.tolist()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False):
            pass
        with torch.amp.autocast(device_type="cpu", enabled=False):
            pass
        assert torch.compile(opt) is opt and torch.inference_mode
        refused = {
            "cuda": lambda: torch.zeros(1).cuda(),
            "synchronize": torch.cuda.synchronize,
            "current_device": torch.cuda.current_device,
            "get_device_name": torch.cuda.get_device_name,
            "distributed": lambda: init_process_group(backend="nccl"),
            "parallel": lambda: DDP(torch.nn.Linear(2, 2)),
            "multiprocessing": lambda: tmp.spawn(print, nprocs=2),
            "ONNX": lambda: torch.onnx.export(torch.nn.Linear(2, 2), torch.zeros(1, 2), "m.onnx"),
            "distributed data": lambda: DistributedSampler(range(4)),
        }
        for feature, use in refused.items():
            try:
                use()
            except RuntimeError as e:
                assert feature.lower() in str(e).lower(), (feature, str(e))
            else:
                raise AssertionError(f"{feature} did not raise")
        try:
            torch.zeros(1, device="cuda")
        except ValueError as e:
            assert "'cuda'" in str(e)
        print("ok")
        """,
    )
    assert run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout.strip() == "ok"


def test_missing_names_say_so(tmp_path: Path, run_python) -> None:
    path = script(
        tmp_path,
        """
        import torch
        for stmt in ("import torch.jit", "import torch.nn.foo", "from torch.utils import checkpoint_x"):
            try:
                exec(stmt)
            except ImportError as e:
                assert "minitensor" in str(e) or "cannot import" in str(e), str(e)
            else:
                raise AssertionError(stmt)
        try:
            torch.not_a_function
        except AttributeError as e:
            assert "minitensor does not implement torch.not_a_function" in str(e)
        print("ok")
        """,
    )
    assert run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout.strip() == "ok"


def test_in_process_install_and_uninstall(tmp_path: Path, run_python) -> None:
    path = script(
        tmp_path,
        """
        import sys
        import minitensor.compat
        assert not minitensor.compat.is_installed()
        minitensor.compat.install()
        minitensor.compat.install()  # twice is fine
        import torch
        import torch.nn.functional as F
        import minitensor
        assert minitensor.compat.is_installed() and torch.randn is minitensor.randn
        assert F.relu(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
        from torch.serialization import safe_globals
        with safe_globals([object]):
            pass
        minitensor.compat.uninstall()
        assert "torch" not in sys.modules and "torch.nn" not in sys.modules
        print("ok")
        """,
    )
    assert run_python([str(path)], cwd=tmp_path).stdout.strip() == "ok"


def test_install_refuses_when_the_real_torch_is_loaded(tmp_path: Path, run_python) -> None:
    pytest.importorskip("torch")
    path = script(
        tmp_path,
        """
        import torch  # the real one
        import minitensor.compat
        try:
            minitensor.compat.install()
        except RuntimeError as e:
            assert "already imported" in str(e)
            print("refused")
        """,
    )
    assert run_python([str(path)], cwd=tmp_path).stdout.strip() == "refused"
