"""``mt.linalg``: the norms of ``torch.linalg`` that minitensor has (``vector_norm``)."""

from .ops.norms import vector_norm

__all__ = ["vector_norm"]
