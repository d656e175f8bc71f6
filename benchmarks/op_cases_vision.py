"""Cases for the image ops: pooling (average, max, power, adaptive; 1-D and 2-D), max
unpooling, resizing (interpolate, upsample), pixel and channel shuffles, and the
normalizations over images (batch, instance, group, local response).

Images are (N, C, H, W) of r * c elements (``op_inputs.image_shape``: 16 channels of
32 x 32 at 2^17, 4 of 8 x 8 at 16 x 16); 1-D signals are the same as (N, C, H * W).
"""

from __future__ import annotations

from op_inputs import F32, Case, image, image_shape


def _signal(rng, r, c):
    """(N, C, L): an image's rows laid end to end."""
    n, ch, h, w = image_shape(r, c)
    return (rng.standard_normal((n, ch, h * w), dtype=F32),)


def _positive_image(rng, r, c):
    """An image in (0.5, 2) (power pooling takes a root of sums of powers)."""
    return (rng.uniform(0.5, 2.0, image_shape(r, c)).astype(F32),)


def _positive_signal(rng, r, c):
    n, ch, h, w = image_shape(r, c)
    return (rng.uniform(0.5, 2.0, (n, ch, h * w)).astype(F32),)


def _image_norm(rng, r, c):
    """An image, a per-channel weight near 1 and a bias; and running mean and variance (constants)."""
    shape = image_shape(r, c)
    ch = shape[1]
    weight = 1 + rng.standard_normal(ch, dtype=F32) / 4
    running = rng.standard_normal(ch, dtype=F32), rng.uniform(0.5, 2.0, ch).astype(F32)
    return rng.standard_normal(shape, dtype=F32), weight, rng.standard_normal(ch, dtype=F32), *running


def _max_unpool2d(lib, F, x):
    pooled, indices = F.max_pool2d(x, 2, return_indices=True)
    return F.max_unpool2d(pooled, indices, 2)


def _max_unpool1d(lib, F, x):
    pooled, indices = F.max_pool1d(x, 2, return_indices=True)
    return F.max_unpool1d(pooled, indices, 2)


def _batch_norm(lib, F, x, w, b, mean, var):
    """Training mode: the batch's statistics (the running ones are updated, not used)."""
    return F.batch_norm(x, mean.clone(), var.clone(), w, b, training=True)


CASES = [
    # pooling
    Case("avg_pool2d", "pool", image, lambda lib, F, x: F.avg_pool2d(x, 2)),
    Case("avg_pool1d", "pool", _signal, lambda lib, F, x: F.avg_pool1d(x, 2)),
    Case("max_pool2d", "pool", image, lambda lib, F, x: F.max_pool2d(x, 2)),
    Case("max_pool1d", "pool", _signal, lambda lib, F, x: F.max_pool1d(x, 2)),
    Case("lp_pool2d", "pool", _positive_image, lambda lib, F, x: F.lp_pool2d(x, 2, 2)),
    Case("lp_pool1d", "pool", _positive_signal, lambda lib, F, x: F.lp_pool1d(x, 2, 2)),
    Case("adaptive_avg_pool2d", "pool", image, lambda lib, F, x: F.adaptive_avg_pool2d(x, 3)),
    Case("adaptive_avg_pool1d", "pool", _signal, lambda lib, F, x: F.adaptive_avg_pool1d(x, 5)),
    Case("adaptive_max_pool2d", "pool", image, lambda lib, F, x: F.adaptive_max_pool2d(x, 3)),
    Case("adaptive_max_pool1d", "pool", _signal, lambda lib, F, x: F.adaptive_max_pool1d(x, 5)),
    Case("max_unpool2d", "pool", image, _max_unpool2d),
    Case("max_unpool1d", "pool", _signal, _max_unpool1d),
    # resizing and shuffles
    Case(
        "interpolate (bilinear)", "resize", image, lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear")
    ),
    Case("interpolate (nearest)", "resize", image, lambda lib, F, x: F.interpolate(x, scale_factor=2)),
    Case("upsample", "resize", image, lambda lib, F, x: F.upsample(x, scale_factor=2)),
    Case("upsample_nearest", "resize", image, lambda lib, F, x: F.upsample_nearest(x, scale_factor=2)),
    Case("upsample_bilinear", "resize", image, lambda lib, F, x: F.upsample_bilinear(x, scale_factor=2)),
    Case("pixel_shuffle", "resize", image, lambda lib, F, x: F.pixel_shuffle(x, 2)),
    Case("pixel_unshuffle", "resize", image, lambda lib, F, x: F.pixel_unshuffle(x, 2)),
    Case("channel_shuffle", "resize", image, lambda lib, F, x: F.channel_shuffle(x, 2)),
    # normalization
    Case("batch_norm", "norm", _image_norm, _batch_norm, (3, 4)),
    Case(
        "instance_norm",
        "norm",
        _image_norm,
        lambda lib, F, x, w, b, mean, var: F.instance_norm(x, weight=w, bias=b),
        (3, 4),
    ),
    Case("group_norm", "norm", _image_norm, lambda lib, F, x, w, b, mean, var: F.group_norm(x, 2, w, b), (3, 4)),
    Case("local_response_norm", "norm", image, lambda lib, F, x: F.local_response_norm(x, 3)),
]
