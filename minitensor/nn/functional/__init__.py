# ruff: noqa: F401  (this file re-exports)
"""Stateless versions of the layers: ``import minitensor.nn.functional as F``.

One file per family (activation, linear, conv, fold, normalization, dropout, embedding, ...);
this package re-exports their functions, so ``F.linear(x, w, b)`` works.
"""

from ...ops.padding import pad
from ...ops.softplus import softplus
from .activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .batch_norm import batch_norm, instance_norm
from .binary_loss import binary_cross_entropy, binary_cross_entropy_with_logits
from .conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .ctc import ctc_loss
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .divergence import kl_div
from .dropout import dropout
from .embedding import embedding, embedding_bag, one_hot
from .feature_dropout import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from .fold import fold, unfold
from .group_norm import group_norm, local_response_norm
from .interpolation import interpolate, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest
from .likelihood_loss import gaussian_nll_loss, poisson_nll_loss
from .linear import bilinear, linear
from .loss import cross_entropy, mse_loss, nll_loss
from .margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .normalization import layer_norm, rms_norm
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
from .shuffle import channel_shuffle
