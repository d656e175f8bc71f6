"""Train a small classifier, checkpoint it, resume it: one PyTorch script for minitensor and PyTorch.

The file is plain PyTorch code.  minitensor runs it through its switch; PyTorch runs it as it is,
on one process or on several (DistributedDataParallel under ``torchrun``), from the same checkpoint:

    python -m minitensor.compat train.py --steps 50 --save ckpt.pt                 # minitensor
    python train.py --resume ckpt.pt --steps 50 --save ckpt.pt                     # PyTorch
    torchrun --nproc_per_node 2 train.py --resume ckpt.pt --steps 50 --save ckpt.pt  # PyTorch, 2 processes

Each step's batch is drawn by NumPy from the step number (three interleaved spirals), and the first
weights too, so a run resumed at step k sees exactly the batches an unbroken run would: its losses
carry on where the checkpoint left them, whichever library wrote it.  Each step prints one JSON line,
``{"step": 12, "loss": 0.84}``.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def batch(step: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` points of three interleaved spirals (x: (size, 2) float32) and their classes (y: (size,) int64)."""
    rng = np.random.default_rng(step)
    y = rng.integers(0, 3, size)
    radius = rng.uniform(0.1, 1.0, size)
    angle = 4.0 * radius + 2.0 * np.pi * y / 3 + rng.normal(0.0, 0.15, size)
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return x.astype(np.float32), y.astype(np.int64)


class Classifier(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 3)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def first_weights(model: nn.Module) -> None:
    """The same starting point in every library: weights drawn by NumPy, biases zero."""
    rng = np.random.default_rng(0)
    state = {}
    for name, value in model.state_dict().items():
        if value.dim() == 2:
            scale = 1.0 / np.sqrt(value.shape[1])
            state[name] = torch.from_numpy(rng.normal(0.0, scale, tuple(value.shape)).astype(np.float32))
        else:
            state[name] = torch.zeros_like(value)
    model.load_state_dict(state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="steps to train (from the checkpoint's step)")
    parser.add_argument("--batch", type=int, default=96, help="batch size (split between processes)")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--resume", help="checkpoint to start from")
    parser.add_argument("--save", help="where to write the checkpoint (model, optimizer, step)")
    parser.add_argument("--save-at", type=int, help="the step after which to save (default: the last)")
    args = parser.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:  # launched by torchrun: one process per worker
        torch.distributed.init_process_group("gloo")

    model = Classifier()
    first_weights(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume)  # weights_only: tensors, numbers and containers, nothing run
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start = checkpoint["step"]
    trained = nn.parallel.DistributedDataParallel(model) if world > 1 else model

    end = start + args.steps
    save_at = end if args.save_at is None else args.save_at
    for step in range(start, end):
        x, y = batch(step, args.batch)
        x, y = x[rank::world], y[rank::world]  # this process's share of the batch
        loss = F.cross_entropy(trained(torch.from_numpy(x)), torch.from_numpy(y))
        optimizer.zero_grad()
        loss.backward()  # under DDP: the gradients are averaged over the processes here
        optimizer.step()
        mean_loss = loss.detach().clone()
        if world > 1:
            torch.distributed.all_reduce(mean_loss)
            mean_loss /= world
        if rank == 0:
            print(json.dumps({"step": step, "loss": mean_loss.item()}), flush=True)
            if args.save and step + 1 == save_at:
                state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step + 1}
                torch.save(state, args.save)
    if world > 1:
        torch.distributed.barrier()  # every process waits for the checkpoint before the group ends
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
