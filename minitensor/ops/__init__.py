"""Differentiable ops: one Function per op, grouped by family (see each module)."""
