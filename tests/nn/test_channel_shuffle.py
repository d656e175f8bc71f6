"""nn/channel_shuffle.py: ``nn.ChannelShuffle`` as PyTorch's (repr, no state, output) and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


def test_layer_as_pytorch(torch):
    ours, theirs = nn.ChannelShuffle(2), torch.nn.ChannelShuffle(2)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict()) == []
    x = np.random.default_rng(1).standard_normal((2, 4, 3, 3))
    np.testing.assert_array_equal(ours(mt.tensor(x, dtype=mt.float64)).numpy(), theirs(torch.tensor(x)).numpy())
    with pytest.raises(ValueError, match="ChannelShuffle: groups must be a positive int, got -1"):
        nn.ChannelShuffle(-1)
