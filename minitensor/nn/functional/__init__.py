# ruff: noqa: F401  (this file re-exports)
"""Stateless versions of the layers: ``import minitensor.nn.functional as F``.

One file per family (activation, linear, conv, fold, normalization, dropout, embedding, ...);
this package re-exports their functions, so ``F.linear(x, w, b)`` works.
"""

from ...ops.padding import pad
from ...ops.softplus import silu, softplus
from .activation import gelu, log_softmax, relu, sigmoid, softmax, tanh
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .batch_norm import batch_norm, instance_norm
from .binary_loss import binary_cross_entropy, binary_cross_entropy_with_logits
from .conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .divergence import kl_div
from .dropout import dropout
from .embedding import embedding, one_hot
from .feature_dropout import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from .fold import fold, unfold
from .group_norm import group_norm, local_response_norm
from .interpolation import interpolate, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest
from .linear import linear
from .loss import cross_entropy, mse_loss, nll_loss
from .normalization import layer_norm
from .pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    lp_pool1d,
    lp_pool2d,
    max_pool1d,
    max_pool2d,
    max_unpool1d,
    max_unpool2d,
)
from .robust_loss import huber_loss, l1_loss, smooth_l1_loss
