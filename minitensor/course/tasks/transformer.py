"""Task: a Transformer encoder layer from the parts of the earlier weeks, and the milestone."""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn as nn

from ..milestone import QUICK, classifier, held_out_accuracy, train_weights, training_data
from ._base import Check, CheckFailure, Mutant, Task
from ._helpers import arrays, check_program, expect_close, malformed

SOLUTION = '''"""Week 12: a Transformer encoder layer from parts (Post-LN, batch first, no dropout).

x (N, L, E) -> (N, L, E):
    x = layer_norm(x + self_attention(x))        (norm1)
    x = layer_norm(x + linear2(relu(linear1(x))))  (norm2)
``p`` maps PyTorch's parameter names (``"self_attn.in_proj_weight"`` (3E, E),
``"self_attn.in_proj_bias"``, ``"self_attn.out_proj.weight"``, ``"linear1.weight"``,
``"norm1.weight"``, ...) to Tensors.  ``ops`` are your ops of the earlier weeks:
``ops.linear(x, w, b)``, ``ops.add``, ``ops.relu``, ``ops.layer_norm(x, w, b)``,
``ops.attention(q, k, v, mask)``; Tensor slicing, ``reshape`` and ``transpose`` are free.
"""


def self_attention(x, p, ops, nhead, mask=None):
    """Multi-head self-attention: (N, L, E) -> (N, L, E).

    Hint: one projection gives q, k and v side by side (3E); split each into
    ``nhead`` heads of E // nhead: (N, L, E) -> (N, nhead, L, E // nhead).
    """
    # BEGIN SOLUTION
    n, length, e = x.shape
    qkv = ops.linear(x, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"])  # (N, L, 3E)

    def heads(t):
        return t.reshape(n, length, nhead, e // nhead).transpose(1, 2)

    q, k, v = heads(qkv[..., :e]), heads(qkv[..., e : 2 * e]), heads(qkv[..., 2 * e :])
    out = ops.attention(q, k, v, mask).transpose(1, 2).reshape(n, length, e)
    return ops.linear(out, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])
    # END SOLUTION


def encoder_layer(x, p, ops, nhead, mask=None):
    """One Post-LN encoder layer: (N, L, E) -> (N, L, E)."""
    # BEGIN SOLUTION
    x = ops.layer_norm(ops.add(x, self_attention(x, p, ops, nhead, mask)), p["norm1.weight"], p["norm1.bias"])
    h = ops.relu(ops.linear(x, p["linear1.weight"], p["linear1.bias"]))
    x = ops.layer_norm(ops.add(x, ops.linear(h, p["linear2.weight"], p["linear2.bias"])), p["norm2.weight"],
                       p["norm2.bias"])  # fmt: skip
    return x
    # END SOLUTION
'''


def _layer(seed: int) -> nn.TransformerEncoderLayer:
    mt.manual_seed(seed)
    return nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, batch_first=True, dtype=mt.float64)


def _encoder_layer(ops, x, *ws, names: list, fixed: dict, mask=None):
    """``ops.encoder_layer`` (2 heads) with the parameters ``names`` taken from ``ws``, the others from ``fixed``."""
    return ops.encoder_layer(x, {**{k: mt.from_numpy(v) for k, v in fixed.items()}, **dict(zip(names, ws))}, 2, mask)


def _forward(student) -> None:
    layer, x = _layer(22), mt.randn(2, 3, 4, dtype=mt.float64)
    params = {k: p.numpy() for k, p in layer.named_parameters()}
    mask = np.triu(np.ones((3, 3), dtype=bool), k=1)
    for m in (None, mask):
        settings = {"names": [], "fixed": params, "mask": m}
        reply = student.probe("gradients", program="encoder layer", inputs=[x.numpy()], settings=settings, weights=[])
        got = arrays([reply.get("out") if isinstance(reply, dict) else None], [x.shape], "encoder_layer")[0]
        want = layer(x, src_mask=None if m is None else mt.tensor(m))
        expect_close(got, want.detach().numpy(), "encoder_layer" + (" with a mask" if m is not None else ""))


def _gradients(student) -> None:
    layer = _layer(23)
    x = mt.randn(2, 3, 4, dtype=mt.float64, requires_grad=True)
    names = ["self_attn.in_proj_weight", "linear1.weight", "norm2.bias"]
    params = {k: p.numpy() for k, p in layer.named_parameters()}
    ws = [mt.tensor(params.pop(n), dtype=mt.float64, requires_grad=True) for n in names]
    check_program(student, "encoder layer", [x, *ws], settings={"names": names, "fixed": params})


def _train(wb, batches: list, lr: float) -> dict:
    """(In the student's process) the milestone's training on the whole workbook: the trained weights."""
    return train_weights(wb.own, batches, lr)


def _milestone(student) -> None:
    missing = student.problems()
    if missing:
        raise CheckFailure("the milestone trains on all your tasks: " + "; ".join(missing))
    data = training_data()
    weights = student.probe("train", batches=data.batches, lr=QUICK["lr"])
    shapes = {name: tuple(p.shape) for name, p in classifier().named_parameters()}
    if not (isinstance(weights, dict) and set(weights) == set(shapes)):
        raise malformed("the trained weights")
    arrays(list(weights.values()), [shapes[name] for name in weights], "the trained weights")
    accuracy = held_out_accuracy(weights, data)
    if not accuracy >= QUICK["bar"]:
        raise CheckFailure(f"held-out accuracy {accuracy:.1%} after {QUICK['steps']} steps; the bar is "
                           f"{QUICK['bar']:.0%} (the reference workbook reaches it)")  # fmt: skip


_RIGHT = 'x = ops.layer_norm(ops.add(x, self_attention(x, p, ops, nhead, mask)), p["norm1.weight"], p["norm1.bias"])'
_WRONG = 'x = ops.add(x, ops.layer_norm(self_attention(x, p, ops, nhead, mask), p["norm1.weight"], p["norm1.bias"]))'

TASK = Task(
    name="transformer",
    title="A Transformer encoder layer from parts (and the milestone)",
    summary="assemble attention, layer norm and the feed-forward block; train the demo classifier on your ops",
    solution=SOLUTION,
    checks=[
        Check("equals nn.TransformerEncoderLayer", 4, _forward),
        Check("gradients", 3, _gradients),
        Check("milestone: the demo Transformer trains on your ops to 80 %", 8, _milestone, whole_workbook=True),
    ],
    mutants=[Mutant("the residual added after the norm", _RIGHT, _WRONG, None)],
    programs={"encoder layer": _encoder_layer},
    probes={"train": _train},
)
