"""The switch's ``torch.optim`` names: every optimizer and scheduler, the modules PyTorch scripts import
them from (``torch.optim.lr_scheduler``, ``torch.optim.optimizer``, ``torch.optim.adam`` ...), and the
old base-class name ``_LRScheduler`` that many scripts still subclass."""

from __future__ import annotations

import textwrap
from pathlib import Path


def test_old_lr_scheduler_base_and_every_optim_name_resolve(tmp_path: Path, run_python) -> None:
    path = tmp_path / "train.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch
            from torch.optim.lr_scheduler import _LRScheduler, LRScheduler, CyclicLR, SequentialLR
            from torch.optim.optimizer import Optimizer
            from torch.optim.adagrad import Adagrad
            from torch.optim.nadam import NAdam
            import minitensor as mt

            class HalveEveryTwo(_LRScheduler):  # a script's own schedule, on the old base name
                def get_lr(self):
                    return [base_lr * 0.5 ** (self.last_epoch // 2) for base_lr in self.base_lrs]

            w = torch.nn.Parameter(torch.zeros(2))
            opt = torch.optim.SGD([w], lr=0.1)
            sched = HalveEveryTwo(opt)
            lrs = [opt.param_groups[0]["lr"]]
            for _ in range(4):
                opt.step()
                sched.step()
                lrs.append(opt.param_groups[0]["lr"])
            names = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "RAdam",
                     "RMSprop", "Rprop", "SGD"]
            checks = [issubclass(_LRScheduler, LRScheduler), Optimizer is mt.optim.Optimizer,
                      Adagrad is torch.optim.Adagrad is mt.optim.Adagrad, NAdam is mt.optim.NAdam,
                      all(getattr(torch.optim, n) is getattr(mt.optim, n) for n in names),
                      CyclicLR is mt.optim.lr_scheduler.CyclicLR, SequentialLR is mt.optim.lr_scheduler.SequentialLR]
            print(lrs, all(checks), [i for i, ok in enumerate(checks) if not ok])
            """
        )
    )
    out = run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout
    assert out.split("]")[0] + "]" == "[0.1, 0.1, 0.05, 0.05, 0.025]", out
    assert out.split("] ")[1].startswith("True"), out
