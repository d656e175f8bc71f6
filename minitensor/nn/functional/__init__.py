# ruff: noqa: F401  (this file re-exports)
"""Stateless versions of the layers: ``import minitensor.nn.functional as F``.

One file per family (activation, linear, conv, fold, normalization, dropout, embedding, ...);
this package re-exports their functions, so ``F.linear(x, w, b)`` works.
"""

from ...ops.padding import pad
from ...ops.softplus import silu, softplus
from .activation import gelu, log_softmax, relu, sigmoid, softmax, tanh
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .binary_loss import binary_cross_entropy, binary_cross_entropy_with_logits
from .conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .divergence import kl_div
from .dropout import dropout
from .embedding import embedding, one_hot
from .fold import fold, unfold
from .linear import linear
from .loss import cross_entropy, mse_loss, nll_loss
from .normalization import layer_norm
from .robust_loss import huber_loss, l1_loss, smooth_l1_loss
