"""``Embedding``: a lookup table from integer ids to learned vectors; ``EmbeddingBag``: the sum, mean or max
of the vectors of each bag of ids (without building the (bag, id, dim) lookup first in PyTorch; here
the lookup, then one scatter-add or max per bag).

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
from .parameter import Parameter


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


class EmbeddingBag(Module):
    """The sum, mean or max of the learned vectors of each bag of ids (``F.embedding_bag``).

    Args:
        num_embeddings, embedding_dim: as ``Embedding`` (``weight`` (V, D), init N(0, 1)).
        mode: ``'sum'``, ``'mean'`` (default) or ``'max'``.
        include_last_offset: the offsets end with the input's length (B + 1 of them).
        padding_idx: an id left out of every bag; its row starts at zero and gets no gradient.
        max_norm, norm_type, scale_grad_by_freq, sparse: accepted at their defaults only (as ``Embedding``).

    ``forward(input, offsets=None, per_sample_weights=None)``: a 2-D input (B, L) (each row a bag) or a
    1-D input with the (B,) offsets where the bags start.  Output (B, D).
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        unsupported = {"max_norm": max_norm, "scale_grad_by_freq": scale_grad_by_freq, "sparse": sparse}
        for name, value in unsupported.items():
            if value:
                raise ValueError(f"EmbeddingBag: {name}={value!r} is not supported by minitensor (only the default)")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.num_embeddings = check_size(num_embeddings, "num_embeddings", "EmbeddingBag")
        self.embedding_dim = check_size(embedding_dim, "embedding_dim", "EmbeddingBag")
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int):
                raise TypeError(f"EmbeddingBag: padding_idx must be an int or None, got {type(padding_idx).__name__}")
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(
                    f"EmbeddingBag: padding_idx must be in [{-self.num_embeddings}, {self.num_embeddings - 1}], "
                    f"got {padding_idx}"
                )
            padding_idx %= self.num_embeddings
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = padding_idx
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is None:
            self.weight = empty_parameter(shape, float_dtype(dtype, "EmbeddingBag", device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != shape:
                raise ValueError(f"EmbeddingBag: _weight must have shape {shape}, got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight.detach().numpy().copy())

    def reset_parameters(self) -> None:
        """N(0, 1), with the padding row set to zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose weight is a copy of ``embeddings`` (V, D); frozen unless ``freeze=False``."""
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            raise ValueError("EmbeddingBag.from_pretrained: embeddings must be a 2-D Tensor (num_embeddings, dim)")
        module = cls(
            *embeddings.shape, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
            include_last_offset, padding_idx,
        )  # fmt: skip
        module.weight.requires_grad_(not freeze)
        return module

    def forward(self, input, offsets=None, per_sample_weights: Tensor | None = None) -> Tensor:  # noqa: A002
        return F.embedding_bag(
            input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
            include_last_offset=self.include_last_offset, padding_idx=self.padding_idx,
        )  # fmt: skip

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
        return text if self.padding_idx is None else text + f", padding_idx={self.padding_idx}"
