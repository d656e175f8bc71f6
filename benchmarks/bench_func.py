"""Why function transforms matter, measured: minitensor.func against a loop and against torch.func.

    python benchmarks/bench_func.py            # every case
    python benchmarks/bench_func.py --quick    # shorter turns

Cases (float32, 2 threads for everyone; each time a median over turns taken in alternation,
so a change of machine load hits all rows alike; ratios compare times from the same run):

- per-sample gradients of an MLP (64 -> 128 -> 10, cross-entropy) and of a small CNN (two 3x3
  convolutions, max pooling, 16x16 images) at batch 64: ``vmap(grad)`` against a Python loop of
  per-example ``grad`` (target: >= 5x faster) and against PyTorch's ``torch.func`` (target: <= 1.5x
  its time);
- Jacobians both ways: ``jacfwd`` and ``jacrev`` of tanh(W x) for R^4 -> R^1000 (forward mode
  should win: 4 JVPs against 1000 VJPs) and for R^1000 -> R^4 (reverse mode should win);
- a Hessian-vector product of an MLP loss in its parameters, against one gradient evaluation
  (target: <= 2 gradients' time), by reverse-over-forward (``autograd.functional.hvp``: the
  gradient of the derivative along v) and by forward-over-reverse (``jvp`` of ``grad``), at a small
  size (where the per-op cost of an eager library decides, PyTorch's included) and a large one
  (where the matrix products do: the large layer reads the data, and reverse-over-forward runs
  three of its products where forward-over-reverse runs four and the gradient two).

Targets are printed as met or not, never asserted.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402

import host  # noqa: E402
import numpy as np  # noqa: E402
from bench_encoder import time_in_turns  # noqa: E402

import minitensor as mt  # noqa: E402
import minitensor.func as mf  # noqa: E402

try:
    import torch
    import torch.func as tf
except ImportError:  # the benchmark still runs, without the PyTorch rows
    torch = tf = None

BATCH, IN, HIDDEN, CLASSES = 64, 64, 128, 10


def _mlp_arrays(rng, n_in: int = IN, hidden: int = HIDDEN) -> dict:
    return {
        "w1": (rng.standard_normal((hidden, n_in)) / np.sqrt(n_in)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((CLASSES, hidden)) / np.sqrt(hidden)).astype(np.float32),
        "b2": np.zeros(CLASSES, np.float32),
    }


def _loss(L, params, x, y):
    """Cross-entropy of one example (x: (IN,), y: a 0-d class index) or of a batch."""
    F = L.nn.functional
    h = L.tanh(F.linear(x, params["w1"], params["b1"]))
    logits = F.linear(h, params["w2"], params["b2"])
    return F.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0)) if x.ndim == 1 else F.cross_entropy(logits, y)


def per_sample_steps(loss, arrays: dict, xs: np.ndarray, ys: np.ndarray) -> dict:
    """Per-sample gradients of ``loss(L, params, x, y)`` (one example) over the batch ``xs``, ``ys``:
    vmap(grad), a Python loop of grad, and torch.func's vmap(grad)."""
    params = {k: mt.tensor(v) for k, v in arrays.items()}
    x, y = mt.tensor(xs), mt.tensor(ys)
    one_grad = mf.grad(lambda p, a, b: loss(mt, p, a, b))
    per_sample = mf.vmap(one_grad, in_dims=(None, 0, 0))
    steps = {
        "minitensor vmap(grad)": lambda: per_sample(params, x, y),
        "minitensor loop of grad": lambda: [one_grad(params, x[i], y[i]) for i in range(len(xs))],
    }
    if tf is not None:
        tparams = {k: torch.tensor(v) for k, v in arrays.items()}
        tx, ty = torch.tensor(xs), torch.tensor(ys)
        t_per_sample = tf.vmap(tf.grad(lambda p, a, b: loss(torch, p, a, b)), in_dims=(None, 0, 0))
        steps["torch.func vmap(grad)"] = lambda: t_per_sample(tparams, tx, ty)
    return steps


def mlp_per_sample_steps(rng) -> dict:
    xs = rng.standard_normal((BATCH, IN)).astype(np.float32)
    return per_sample_steps(_loss, _mlp_arrays(rng), xs, rng.integers(0, CLASSES, BATCH))


def _cnn_arrays(rng) -> dict:
    return {
        "c1": (rng.standard_normal((8, 1, 3, 3)) / 3).astype(np.float32),
        "c2": (rng.standard_normal((16, 8, 3, 3)) / 8).astype(np.float32),
        "fc": (rng.standard_normal((CLASSES, 16)) / 4).astype(np.float32),
    }


def _cnn_loss(L, params, x, y):
    """A small CNN on one (1, 16, 16) image: conv-relu-maxpool, conv-relu, global average, linear."""
    F = L.nn.functional
    h = F.max_pool2d(F.conv2d(x.unsqueeze(0), params["c1"], padding=1).relu(), 2)
    h = F.conv2d(h, params["c2"], padding=1).relu().mean((2, 3))
    return F.cross_entropy(h @ params["fc"].T, y.unsqueeze(0))


def cnn_per_sample_steps(rng) -> dict:
    xs = rng.standard_normal((BATCH, 1, 16, 16)).astype(np.float32)
    return per_sample_steps(_cnn_loss, _cnn_arrays(rng), xs, rng.integers(0, CLASSES, BATCH))


def jacobian_steps(rng, n_in: int, n_out: int) -> dict:
    w = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
    x0 = rng.standard_normal(n_in).astype(np.float32)
    mw, mx = mt.tensor(w), mt.tensor(x0)

    def f(x):
        return mt.tanh(mw @ x)

    steps = {"minitensor jacfwd": lambda: mf.jacfwd(f)(mx), "minitensor jacrev": lambda: mf.jacrev(f)(mx)}
    if tf is not None:
        tw, tx = torch.tensor(w), torch.tensor(x0)

        def g(x):
            return torch.tanh(tw @ x)

        steps["torch.func jacfwd"] = lambda: tf.jacfwd(g)(tx)
        steps["torch.func jacrev"] = lambda: tf.jacrev(g)(tx)
    return steps


def hvp_steps(rng, batch: int, n_in: int, hidden: int) -> dict:
    """A Hessian-vector product of the MLP loss in its parameters two ways, and one gradient:
    forward-over-reverse (``jvp`` of ``grad``: the gradient and its tangent) and reverse-over-forward
    (``autograd.functional.hvp``: the gradient of the derivative along v, never the gradient itself;
    PyTorch's the same composition by ``torch.func``, its ``autograd.functional.hvp`` being the slower
    double-vjp trick).  Each HVP step returns H v as a dict of the parameters' names."""
    arrays = _mlp_arrays(rng, n_in, hidden)
    xs = rng.standard_normal((batch, n_in)).astype(np.float32)
    ys = rng.integers(0, CLASSES, batch)
    params = {k: mt.tensor(v) for k, v in arrays.items()}
    v = {k: mt.tensor(rng.standard_normal(a.shape).astype(np.float32)) for k, a in arrays.items()}
    x, y = mt.tensor(xs), mt.tensor(ys)
    names = list(arrays)
    grad = mf.grad(lambda p: _loss(mt, p, x, y))

    def rev_fwd():
        loss = lambda *ts: _loss(mt, dict(zip(names, ts)), x, y)  # noqa: E731
        _, hv = mt.autograd.functional.hvp(loss, tuple(params.values()), tuple(v.values()))
        return dict(zip(names, hv))

    steps = {
        "minitensor gradient": lambda: grad(params),
        "minitensor HVP (jvp of grad)": lambda: mf.jvp(grad, (params,), (v,))[1],
        "minitensor HVP (grad of jvp)": rev_fwd,
    }
    if tf is not None:
        tparams = {k: torch.tensor(a) for k, a in arrays.items()}
        tv = {k: torch.tensor(t.numpy()) for k, t in v.items()}
        tx, ty = torch.tensor(xs), torch.tensor(ys)
        tloss = lambda p: _loss(torch, p, tx, ty)  # noqa: E731
        tgrad = tf.grad(tloss)
        steps["torch.func gradient"] = lambda: tgrad(tparams)
        steps["torch.func HVP (jvp of grad)"] = lambda: tf.jvp(tgrad, (tparams,), (tv,))[1]
        steps["torch.func HVP (grad of jvp)"] = lambda: tf.grad(lambda p: tf.jvp(tloss, (p,), (tv,))[1])(tparams)
    return steps


def _ratio_line(ms: dict, a: str, b: str, what: str, good=None) -> str:
    """``a / b`` from one run's medians, with the target's verdict when ``good`` judges it."""
    if a not in ms or b not in ms:
        return f"- {a} / {b}: n/a (PyTorch absent)"
    r = ms[a] / ms[b]
    verdict = "" if good is None else f": {'met' if good(r) else 'NOT met'}"
    return f"- {a} / {b} = {r:.2f} ({what}{verdict})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter measurement")
    args = parser.parse_args()
    min_time = 1.0 if args.quick else 3.0
    if torch is not None:
        torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    print(host.machine(torch))
    print(host.state())
    lines = []
    cases = [
        ("per-sample gradients, MLP 64-128-10, batch 64", mlp_per_sample_steps(rng)),
        ("per-sample gradients, CNN (two 3x3 convolutions, 16x16 images), batch 64", cnn_per_sample_steps(rng)),
        ("Jacobian of tanh(W x), R^4 -> R^1000", jacobian_steps(rng, 4, 1000)),
        ("Jacobian of tanh(W x), R^1000 -> R^4", jacobian_steps(rng, 1000, 4)),
        ("HVP of an MLP loss in its parameters, 64-128-10 at batch 64", hvp_steps(rng, 64, 64, 128)),
        ("HVP of an MLP loss in its parameters, 1024-2048-10 at batch 512", hvp_steps(rng, 512, 1024, 2048)),
    ]
    results = {}
    for title, steps in cases:
        ms = time_in_turns(steps, min_time)
        results[title] = ms
        print(f"\n{title}\n| case | ms |\n|---|---|")
        for name, t in ms.items():
            print(f"| {name} | {t:.3f} |")
    ps, cnn, j_wide, j_tall, hv_small, hv_large = (results[t] for t, _ in cases)
    for table, model in ((ps, "MLP"), (cnn, "CNN")):
        loop, vmapped, theirs = "minitensor loop of grad", "minitensor vmap(grad)", "torch.func vmap(grad)"
        lines.append(_ratio_line(table, loop, vmapped, f"{model}, target >= 5", lambda r: r >= 5))
        lines.append(_ratio_line(table, vmapped, theirs, f"{model}, target <= 1.5", lambda r: r <= 1.5))
    lines.append(_ratio_line(j_wide, "minitensor jacrev", "minitensor jacfwd", "R^4 -> R^1000: > 1", lambda r: r > 1))
    lines.append(_ratio_line(j_tall, "minitensor jacfwd", "minitensor jacrev", "R^1000 -> R^4: > 1", lambda r: r > 1))
    for hv, size in ((hv_small, "small: per-op overhead decides"), (hv_large, "large: arithmetic decides")):
        hvp = "minitensor HVP (grad of jvp)"  # (autograd.functional.hvp: the target's; the other ways compared)
        lines.append(_ratio_line(hv, hvp, "minitensor gradient", f"{size}, target <= 2", lambda r: r <= 2))
        for lib, way in (("minitensor", "jvp of grad"), ("torch.func", "grad of jvp"), ("torch.func", "jvp of grad")):
            lines.append(_ratio_line(hv, f"{lib} HVP ({way})", f"{lib} gradient", f"{size}, no target"))
    for table, shape in ((j_wide, "R^4 -> R^1000"), (j_tall, "R^1000 -> R^4")):
        for key in ("minitensor jacfwd", "minitensor jacrev"):
            lines.append(_ratio_line(table, key, key.replace("minitensor", "torch.func"), f"{shape}, no target"))
    print("\nTargets\n" + "\n".join(lines))
    print(host.state())


if __name__ == "__main__":
    main()
