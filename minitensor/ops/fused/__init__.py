"""Fused graph nodes: performance only, each an optimisation of a composite written elsewhere.

A Transformer layer is a handful of big matrix products with cheap elementwise work between
them; as ten or more graph nodes, a small layer spends more time on the graph's bookkeeping
than on its math.  Each node here runs the work of several nodes of a composite in one:

- ``attention.py``: ``SelfAttention``, ``CrossAttention``: a multi-head attention layer
  (``nn.functional.multi_head_attention_forward``);
- ``add_norm.py``: ``AddLayerNorm``: ``norm(x + dropout(r))``;
- ``feed_forward.py``: ``FeedForward``: ``linear2(dropout(activation(linear1(x))))``;
- ``encoder_layer.py``, ``decoder_layer.py``: ``EncoderLayer``, ``DecoderLayer``: a whole
  ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``, running the fused sub-layers
  on contexts of their own (``parts.py``).

``nn/fusion.py`` is the one place that decides to use them (standard sub-modules, no hooks);
the layers' own ``forward`` is the definition, which their ``create_graph`` backward
differentiates, and which the tests hold each node equal to.
"""
