"""From token vectors to one sentence vector: mean pooling and L2 normalisation.

A sentence-transformers model lists its steps in ``modules.json``
(Transformer -> Pooling -> Normalize); ``1_Pooling/config.json`` says which
pooling.  minitensor supports the common recipe: the mean of the token vectors
over the real (non-padding) tokens, optionally scaled to unit length.

>>> hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]])   # (N=1, L=3, E=2)
>>> mean_pool(hidden, np.array([[1, 1, 0]]))                    # the 3rd token is padding
array([[2., 3.]])
>>> l2_normalize(np.array([[3.0, 4.0]]))
array([[0.6, 0.8]])
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .paths import read_json

_LEGACY_MODES = {  # sentence-transformers < 5 stored one bool per pooling mode
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}


def mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """(N, L, E) token vectors, (N, L) mask (1 = real token) -> (N, E) mean over the real tokens."""
    mask = attention_mask.astype(hidden.dtype)[:, :, None]
    counts = np.maximum(mask.sum(axis=1), 1e-9)  # as sentence-transformers: no division by 0
    return (hidden * mask).sum(axis=1) / counts


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Each row divided by its Euclidean norm (at least 1e-12, as torch.nn.functional.normalize)."""
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def pooling_modes(config: dict) -> list:
    """The pooling mode names of a ``1_Pooling/config.json``, old (bool keys) or new (``pooling_mode``) style.

    >>> pooling_modes({"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False})
    ['mean']
    >>> pooling_modes({"pooling_mode": "cls"})
    ['cls']
    """
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        return [mode] if isinstance(mode, str) else list(mode)
    return [name for key, name in _LEGACY_MODES.items() if config.get(key)]


def check_pipeline(directory: Path) -> bool:
    """Check that the model pools by the mean; return whether ``modules.json`` ends with Normalize.

    Modules are recognised by their class name (``...models.Pooling`` in old
    sentence-transformers versions, ``...modules.Pooling`` in new ones).  A
    directory without ``modules.json`` is taken as Transformer -> mean Pooling.

    Raises ValueError (naming the file) for another pooling mode or any other module.
    """
    modules_path = directory / "modules.json"
    if not modules_path.is_file():
        return False
    modules = read_json(modules_path)
    kinds = [str(module.get("type", "")).rsplit(".", 1)[-1] for module in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ValueError(f"{str(modules_path)!r}: only Transformer -> Pooling [-> Normalize] is supported, got {kinds}")
    pooling_path = directory / modules[1].get("path", "1_Pooling") / "config.json"
    modes = pooling_modes(read_json(pooling_path))
    if modes != ["mean"]:
        raise ValueError(f"{str(pooling_path)!r}: only mean pooling is supported, got {modes}")
    return kinds[-1] == "Normalize"
