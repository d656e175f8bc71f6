"""``Embedding``: a lookup table from integer ids to learned vectors.

>>> emb = nn.Embedding(10, 4, padding_idx=0)
>>> emb(mt.tensor([[1, 2, 0]])).shape
(1, 3, 4)
>>> emb.weight[0].tolist()               # the padding row starts at zero
[0.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


class Embedding(Module):
    """Row ``i`` of ``weight`` (num_embeddings, embedding_dim) is the vector of id ``i``.

    Args:
        num_embeddings: number of ids V (indices must be in [0, V)).
        embedding_dim: vector size D.
        padding_idx: an id whose row is initialised to zero and never receives
            a gradient (negative values count from the end).
        max_norm, norm_type, scale_grad_by_freq, sparse: PyTorch's options, accepted
            at their defaults only (minitensor does not implement them: any other
            value raises ValueError).
        device: None or 'cpu'.
        dtype: parameter dtype (default: ``mt.get_default_dtype()``).

    Shapes: integer input (*) -> output (*, D).  Init: N(0, 1).
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        *,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        unsupported = {"max_norm": max_norm, "scale_grad_by_freq": scale_grad_by_freq, "sparse": sparse}
        for name, value in unsupported.items():
            if value:
                raise ValueError(f"Embedding: {name}={value!r} is not supported by minitensor (only the default)")
        self.num_embeddings = check_size(num_embeddings, "num_embeddings", "Embedding")
        self.embedding_dim = check_size(embedding_dim, "embedding_dim", "Embedding")
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int):
                raise TypeError(f"Embedding: padding_idx must be an int or None, got {type(padding_idx).__name__}")
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx must be in [{-self.num_embeddings}, {self.num_embeddings - 1}], "
                    f"got {padding_idx}"
                )
            padding_idx %= self.num_embeddings
        self.padding_idx = padding_idx
        dtype = float_dtype(dtype, "Embedding", device)
        self.weight = empty_parameter((self.num_embeddings, self.embedding_dim), dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """N(0, 1), with the padding row set to zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None) -> Embedding:
        """An Embedding whose weight is a copy of ``embeddings`` (V, D); frozen unless ``freeze=False``."""
        if not isinstance(embeddings, Tensor):
            raise TypeError(f"Embedding.from_pretrained: embeddings must be a Tensor, got {type(embeddings).__name__}")
        if embeddings.ndim != 2:
            raise ValueError(
                "Embedding.from_pretrained: embeddings must be 2-D (num_embeddings, embedding_dim), "
                f"got shape {embeddings.shape}"
            )
        module = cls(*embeddings.shape, padding_idx=padding_idx, dtype=embeddings.dtype)
        module.weight._data[...] = embeddings._data
        module.weight.requires_grad_(not freeze)
        return module

    def forward(self, input) -> Tensor:  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else text + f", padding_idx={self.padding_idx}"
