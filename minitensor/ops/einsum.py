"""``einsum``: sums of products of operands, described by subscripts (``'bij,bjk->bik'``).

Forward is ``np.einsum``.  The gradient of one operand is again an einsum:
the incoming gradient (subscripted by the output) times every other operand,
summed down to that operand's subscripts.  Two cases need help:

- a letter only that operand has (summed away, ``'ij->i'``): the gradient does
  not depend on it, so a ones vector with that letter is added as an operand;
- ``...`` in the other terms but not in that operand: the result keeps the
  broadcast dims and they are summed away;
- a repeated letter in that operand (a diagonal, ``'ii->i'``): the result's
  repeated letter is renamed and an identity matrix joins the two, which puts
  the gradient on the diagonal and zeros elsewhere.

``...`` stays as NumPy reads it (broadcast batch dims); the engine sums a
broadcast gradient back to the operand's shape.  Since the backward is an
``Einsum`` again (``Einsum.call``), every order of derivative is exact.
"""

from __future__ import annotations

import string

import numpy as np

from ..autograd.dual import plus
from ..autograd.function import Op
from ..tensor import Tensor

_LETTERS = string.ascii_letters
_OPTIMIZE_FROM = 4096  # elements of the largest operand


class Einsum(Op):
    """``np.einsum(equation, *operands)`` with an explicit ``'...->...'`` equation."""

    @staticmethod
    def forward(ctx, *operands, equation=""):
        ctx.equation = equation
        ctx.save_for_backward(*operands)
        # NumPy's path optimiser turns a contraction into BLAS products (5x faster at 256 x 512), but
        # its search costs ~7 µs: worth it from a few thousand elements.
        optimize = len(operands) > 1 and max(x.size for x in operands) >= _OPTIMIZE_FROM
        return np.asarray(np.einsum(equation, *operands, optimize="greedy" if optimize else False))

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        inputs, output = ctx.equation.split("->")
        subs = inputs.split(",")
        grads = []
        for i, need in enumerate(ctx.needs_input_grad):
            grads.append(_operand_grad(grad, output, subs, operands, i) if need else None)
        return tuple(grads)

    @staticmethod
    def jvp(ctx, *tangents):
        """Multilinear: the sum, over the operands with a tangent, of the einsum with that operand
        replaced by its tangent."""
        xs = ctx.inputs
        return plus(
            *[
                None if t is None else Einsum.call(*xs[:i], t, *xs[i + 1 :], equation=ctx.equation)
                for i, t in enumerate(tangents)
            ]
        )

    @staticmethod
    def batch(b):
        """vmap: a letter of its own for the batch dim, on the batched operands and the output."""
        inputs, output = b.settings["equation"].split("->")
        letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in inputs)
        subs = [letter + s if is_b else s for s, is_b in zip(inputs.split(","), b.batched)]
        return b.run(*b.values, equation=",".join(subs) + "->" + letter + output)


def _operand_grad(grad, output: str, subs: list, operands: tuple, i: int):
    """d(out)/d(operand i) contracted with ``grad``: an einsum of grad and the other operands."""
    terms, arrays = [output], [grad]
    for j, (s, x) in enumerate(zip(subs, operands)):
        if j != i:
            terms.append(s)
            arrays.append(x)
    present = set("".join(terms))
    used = set("".join(subs) + output)
    fresh = (c for c in _LETTERS if c not in used)
    result = ""
    seen = set()
    dtype = operands[i].dtype
    dims = _letter_sizes(subs[i], operands[i].shape)
    for c in subs[i].replace("...", "."):
        if c == ".":
            result += "..."
            continue
        if c in seen:  # a repeated letter: a diagonal, joined to its first place by an identity
            new = next(fresh)
            terms.append(c + new)
            arrays.append(np.eye(dims[c], dtype=dtype))
            result += new
            continue
        seen.add(c)
        if c not in present:  # a letter only this operand has: the gradient is constant along it
            terms.append(c)
            arrays.append(np.ones(dims[c], dtype=dtype))
            present.add(c)
        result += c
    if "..." in result or not any("..." in term for term in terms):
        return Einsum.call(*arrays, equation=",".join(terms) + "->" + result)
    # Other terms broadcast over '...' dims this operand lacks: keep them, then sum them away.
    g = Einsum.call(*arrays, equation=",".join(terms) + "->..." + result)
    extra = g.ndim - len(result)
    return np.sum(g, axis=tuple(range(extra))) if extra else g


def _letter_sizes(sub: str, shape: tuple) -> dict:
    """{letter: size} of one operand's subscripts (``...`` matches the dims it stands for)."""
    if "..." in sub:
        head, tail = sub.split("...")
        letters = list(head) + [None] * (len(shape) - len(head) - len(tail)) + list(tail)
    else:
        letters = list(sub)
    return {c: n for c, n in zip(letters, shape) if c is not None}


def _parse(equation: str, operands: list) -> str:
    """The equation with spaces removed and the output made explicit (checked against the operands)."""
    eq = equation.replace(" ", "")
    inputs, arrow, output = eq.partition("->")
    subs = inputs.split(",")
    if len(subs) != len(operands):
        raise ValueError(f"einsum: the equation has {len(subs)} operand(s) but {len(operands)} were given")
    for k, (s, x) in enumerate(zip(subs, operands)):
        body = s.replace("...", "")
        if any(c not in _LETTERS for c in body) or s.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {s!r} for operand {k} in {equation!r}")
        if len(body) != x.ndim if "..." not in s else len(body) > x.ndim:
            raise ValueError(
                f"einsum: operand {k} has {x.ndim} dims but subscripts {s!r} in {equation!r} expect "
                f"{'at least ' if '...' in s else ''}{len(body)}"
            )
    if not arrow:  # implicit output: letters used once, sorted, after the broadcast dims
        letters = "".join(subs).replace("...", "")
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    for c in output.replace("...", ""):
        if c not in inputs or output.count(c) > 1:
            raise ValueError(f"einsum: output subscript {c!r} of {equation!r} must appear once, and in an input")
    return inputs + "->" + output


def einsum(equation: str, *operands):
    """Einstein summation (``torch.einsum``): e.g. ``einsum('bij,bjk->bik', a, b)`` is a batched matmul.

    Operands may also be given as one list.  Supports ``...`` and repeated letters
    within an operand (a diagonal, ``'ii->i'``).
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for k, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum: operand {k} must be a Tensor, got {type(x).__name__}")
    if len({x.dtype for x in operands}) > 1:
        raise TypeError(f"einsum: operands must have the same dtype, got {[str(x.dtype) for x in operands]}")
    eq = _parse(equation, list(operands))
    output = eq.split("->")[1]
    summed = "..." in eq and "..." not in output
    if summed:  # broadcast dims missing from the output are summed over (as PyTorch; NumPy refuses)
        eq = eq.replace("->", "->...")
    try:
        out = Einsum.apply(*operands, equation=eq)
    except ValueError as e:
        shapes = [x.shape for x in operands]
        raise ValueError(f"einsum: operands of shapes {shapes} do not fit {equation!r}: {e}") from None
    extra = out.ndim - len(output)
    return out.sum(tuple(range(extra))) if summed and extra else out
