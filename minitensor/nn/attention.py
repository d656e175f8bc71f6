"""``MultiheadAttention``: H attention heads in parallel, as PyTorch's layer of the same name.

For each head h (E = embed_dim, H = num_heads, d = E / H)::

    Q_h = query @ Wq_hᵀ + bq_h        K_h = key @ Wk_hᵀ + bk_h        V_h = value @ Wv_hᵀ + bv_h
    head_h = softmax(Q_h @ K_hᵀ / sqrt(d) + mask) @ V_h
    output = concat(head_1 .. head_H) @ W_outᵀ + b_out

>>> mha = nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True)
>>> x = mt.randn(2, 5, 16)                       # (N, L, E)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape
((2, 5, 16), (2, 5, 5))
"""

from __future__ import annotations

from ..tensor import Tensor
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .functional._checks import check_probability
from .functional.attention import multi_head_attention_forward
from .linear import Linear
from .module import Module


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al., 2017) with PyTorch's parameters and masks.

    Args:
        embed_dim: E, the model width (query features and output features).
        num_heads: H; must divide ``embed_dim``.
        dropout: dropout probability on the attention weights (training mode only).
        bias: learn the input and output projection biases.
        batch_first: inputs and outputs are (N, L, E) instead of (L, N, E).
        kdim, vdim: feature sizes of key and value (default E).  When either
            differs from E, the projections are the separate parameters
            ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim),
            ``v_proj_weight`` (E, vdim) instead of the packed ``in_proj_weight`` (3E, E).
        dtype: parameter dtype (default ``mt.get_default_dtype()``).

    Parameters (PyTorch's names, order and init): ``in_proj_weight`` (3E, E)
    xavier-uniform, ``in_proj_bias`` (3E) zeros, ``out_proj`` a ``Linear(E, E)``
    with its default weight init and a zero bias.

    Shapes (N batch, L target length, S source length): query (L, N, E),
    key (S, N, kdim), value (S, N, vdim), batch first with ``batch_first=True``,
    or unbatched (L, E), (S, kdim), (S, vdim).  Tensors or NumPy arrays (a float
    array is converted to the parameters' dtype).

    Masks: a **bool** mask's True means "may NOT attend" (masked out); a
    float mask is added to the scores (use -inf to mask).  Note that
    ``F.scaled_dot_product_attention`` uses the opposite bool convention.

    - ``attn_mask``: (L, S), or (N*H, L, S) for a mask per batch and head;
    - ``key_padding_mask``: (N, S), True (or -inf) at the padding keys;
    - ``is_causal=True`` with no ``attn_mask``: query i attends to keys 0..i.

    A query whose keys are all masked gets all-zero weights, so its output is
    ``out_proj.bias`` (PyTorch gives NaN); other rows and gradients are unaffected.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        batch_first: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.embed_dim = check_size(embed_dim, "embed_dim", "MultiheadAttention")
        self.num_heads = check_size(num_heads, "num_heads", "MultiheadAttention")
        if embed_dim % num_heads != 0:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
            )
        self.kdim = embed_dim if kdim is None else check_size(kdim, "kdim", "MultiheadAttention")
        self.vdim = embed_dim if vdim is None else check_size(vdim, "vdim", "MultiheadAttention")
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout = check_probability(dropout, "dropout", "MultiheadAttention")
        self.batch_first = bool(batch_first)
        self.head_dim = embed_dim // num_heads
        dtype = float_dtype(dtype, "MultiheadAttention", device)

        if self._qkv_same_embed_dim:
            self.in_proj_weight = empty_parameter((3 * embed_dim, embed_dim), dtype)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = empty_parameter((embed_dim, embed_dim), dtype)
            self.k_proj_weight = empty_parameter((embed_dim, self.kdim), dtype)
            self.v_proj_weight = empty_parameter((embed_dim, self.vdim), dtype)
        if bias:
            self.in_proj_bias = empty_parameter((3 * embed_dim,), dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's init: xavier-uniform projections, zero biases."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple:
        """Attend from ``query`` to ``key``/``value``.

        Returns:
            ``(attn_output, attn_weights)``: the output shaped like ``query``
            ((L, N, E), (N, L, E) or (L, E)); the weights (N, L, S) averaged
            over heads, (N, H, L, S) with ``average_attn_weights=False`` (no N
            when unbatched), or None with ``need_weights=False`` (faster: the
            fused attention op, no weights kept).
        """
        params = self._parameters  # one dict lookup each, not Module.__getattr__
        out_proj = self._modules["out_proj"]._parameters
        return multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, params["in_proj_weight"], params["in_proj_bias"],
            None, None, False, self.dropout, out_proj["weight"], out_proj["bias"],
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=params["q_proj_weight"], k_proj_weight=params["k_proj_weight"],
            v_proj_weight=params["v_proj_weight"], average_attn_weights=average_attn_weights, is_causal=is_causal,
            batch_first=self.batch_first,
        )  # fmt: skip
