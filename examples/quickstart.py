"""A first tour of minitensor: a tiny two-layer network, written with tensor ops.

It builds the loss of a small classifier on the four XOR points, back-propagates,
prints the gradients, checks them against finite differences (``gradcheck``, in
float64) and trains the network for a few hundred steps of plain gradient descent.

Run:  python examples/quickstart.py      (exits with status 1 if the gradcheck fails)
"""

from __future__ import annotations

import sys

import numpy as np

import minitensor as mt
from minitensor.autograd import GradcheckError, gradcheck

# The four XOR points (4, 2) and their labels (4, 1): not linearly separable,
# so the hidden layer is needed.
X = mt.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
Y = mt.tensor([[0.0], [1.0], [1.0], [0.0]])


def loss_fn(w1: mt.Tensor, b1: mt.Tensor, w2: mt.Tensor, b2: mt.Tensor) -> mt.Tensor:
    """Binary cross-entropy of a 2-8-1 tanh network, as a 0-d tensor.

    w1: (2, 8), b1: (8,), w2: (8, 1), b2: (1,).  X and Y are cast to w1's dtype.
    """
    x, y = X.to(w1.dtype), Y.to(w1.dtype)
    hidden = (x @ w1 + b1).tanh()  # (4, 8); b1 broadcasts over the rows
    p = (hidden @ w2 + b2).sigmoid()  # (4, 1): probability of label 1
    p = p.clamp(1e-7, 1 - 1e-7)  # keep log() finite
    return -(y * p.log() + (1 - y) * (1 - p).log()).mean()


def main() -> int:
    mt.manual_seed(0)
    params = [
        mt.randn(2, 8, requires_grad=True),
        mt.zeros(8, requires_grad=True),
        mt.randn(8, 1, requires_grad=True),
        mt.zeros(1, requires_grad=True),
    ]
    names = ["w1", "b1", "w2", "b2"]

    # 1. Forward and backward: every parameter gets its gradient in .grad.
    loss = loss_fn(*params)
    print(f"loss = {loss.item():.4f}   (grad_fn: {type(loss.grad_fn).__name__})")
    loss.backward()
    with np.printoptions(precision=4, suppress=True):
        for name, p in zip(names, params):
            print(f"d loss / d {name}  shape {p.grad.shape}:")
            print(p.grad.numpy())

    # 2. Check those gradients against central differences, in float64.
    params64 = [p.detach().double().requires_grad_() for p in params]
    try:
        gradcheck(loss_fn, params64)
    except GradcheckError as err:
        print(f"gradcheck FAILED: {err}")
        return 1
    print("gradcheck (float64, all 4 parameters): passed")

    # 3. Train: plain gradient descent; updates happen outside the graph.
    lr = 0.5
    for step in range(301):
        loss = loss_fn(*params)
        for p in params:
            p.grad = None
        loss.backward()
        with mt.no_grad():
            for p in params:
                p -= lr * p.grad
        if step % 100 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    with mt.no_grad():
        hidden = (X @ params[0] + params[1]).tanh()
        probs = (hidden @ params[2] + params[3]).sigmoid()
    with np.printoptions(precision=2, suppress=True):
        print("predictions for (0,0) (0,1) (1,0) (1,1):", probs.numpy().ravel())
    return 0


if __name__ == "__main__":
    sys.exit(main())
