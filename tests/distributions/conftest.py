"""The ``oracle`` fixture: the same distribution built in minitensor and in PyTorch (float64, parameters that
require grad) must agree on every statistic and every gradient; samples must have the right moments."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


class Oracle:
    """Checks shared by the distribution tests (``torch`` is PyTorch, the oracle)."""

    def __init__(self, torch, rng: np.random.Generator) -> None:
        self.torch, self.rng = torch, rng

    def params(self, requires_grad: bool = True, **arrays) -> tuple:
        """The same float64 parameters as minitensor and as PyTorch leaf tensors: (ours, theirs) dicts."""
        ours = {k: mt.tensor(v, dtype=mt.float64, requires_grad=requires_grad) for k, v in arrays.items()}
        theirs = {k: self.torch.tensor(v, dtype=self.torch.float64, requires_grad=requires_grad)
                  for k, v in arrays.items()}  # fmt: skip
        return ours, theirs

    def value(self, array) -> tuple:
        """A value as both libraries' tensors (float64, or int64 for integer arrays)."""
        array = np.asarray(array)
        if array.dtype.kind in "iu":
            return mt.tensor(array), self.torch.tensor(array)
        return mt.tensor(array, dtype=mt.float64), self.torch.tensor(array, dtype=self.torch.float64)

    @staticmethod
    def close(ours, theirs, rtol: float = 1e-10, atol: float = 1e-12, what: str = "") -> None:
        a = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
        b = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)

    def same_gradients(self, out, t_out, params: dict, t_params: dict, rtol: float = 1e-9) -> None:
        """Backpropagate one random weighting of ``out`` and of ``t_out``: each parameter's gradient agrees."""
        weights = self.rng.standard_normal(tuple(out.shape))
        loss = (out * mt.tensor(weights, dtype=mt.float64)).sum()
        # retain_graph: a lazily computed parameter (logits from probs) is shared with the next statistic's graph
        grads = mt.autograd.grad(loss, list(params.values()), retain_graph=True, allow_unused=True)
        t_loss = (t_out * self.torch.tensor(weights)).sum()
        t_grads = self.torch.autograd.grad(t_loss, list(t_params.values()), retain_graph=True, allow_unused=True)
        for name, g, tg in zip(params, grads, t_grads):
            if tg is None or not tg.detach().numpy().any():
                assert g is None or not g.numpy().any(), f"d/d{name}: PyTorch's is zero"
                continue
            assert g is not None, f"no gradient for {name}"
            self.close(g, tg, rtol=rtol, atol=1e-10, what=f"d/d{name}")

    def check(self, ours, theirs, params: dict, t_params: dict, value, stats=("mean", "variance", "stddev", "mode"),
              grads: bool = True) -> None:  # fmt: skip
        """Shapes, log_prob(value), entropy, the ``stats``, and the gradients of log_prob and entropy."""
        assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
        v, tv = self.value(value)
        lp, t_lp = ours.log_prob(v), theirs.log_prob(tv)
        self.close(lp, t_lp, what="log_prob")
        h, t_h = ours.entropy(), theirs.entropy()
        self.close(h, t_h, what="entropy")
        for name in stats:
            self.close(getattr(ours, name), getattr(theirs, name), what=name)
        if grads:
            self.same_gradients(lp, t_lp, params, t_params)
            self.same_gradients(h, t_h, params, t_params)

    @staticmethod
    def moments(dist, n: int = 20000) -> None:
        """With a fixed seed, the mean and variance of n samples lie within 5 standard errors of the distribution's
        (the variance's from the fourth moment, plus the O(1/n) of the mean's error); same seed, same samples."""
        mt.manual_seed(1234)
        sample = dist.sample((n,))
        x = sample.numpy().astype(np.float64)
        assert x.shape == (n, *dist.batch_shape, *dist.event_shape)
        mean, var = dist.mean.detach().numpy(), dist.variance.detach().numpy()
        assert np.all(np.abs(x.mean(0) - mean) <= 5 * np.sqrt(var / n) + 1e-12), (x.mean(0), mean)
        fourth = ((x - mean) ** 4).mean(0)
        spread = np.sqrt(np.maximum(fourth - var**2, 0) / n) + var / n  # + var / n: the sample mean's own error
        assert np.all(np.abs(x.var(0) - var) <= 5 * spread + 1e-12), (x.var(0), var)
        mt.manual_seed(1234)
        np.testing.assert_array_equal(dist.sample((n,)).numpy(), sample.numpy())
        assert not sample.requires_grad


@pytest.fixture
def oracle(rng) -> Oracle:
    return Oracle(pytest.importorskip("torch"), rng)
