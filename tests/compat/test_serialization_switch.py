"""Under the switch, torch.save / torch.load and torch.serialization (safe_globals, add_safe_globals,
get_safe_globals, clear_safe_globals) are minitensor's, and a whole-model checkpoint goes the way
word_language_model takes it: torch.save(model, f), then torch.load under safe_globals([...])."""

from __future__ import annotations

from pathlib import Path

SCRIPT = """
import pickle

import torch
import torch.nn as nn
import minitensor
from torch.serialization import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

for name in ("safe_globals", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "save", "load"):
    assert getattr(torch.serialization, name) is getattr(minitensor.serialization, name), name
assert torch.save is minitensor.save and torch.load is minitensor.load


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(10, 8)
        self.rnn = nn.LSTM(8, 8, 2)
        self.decoder = nn.Linear(8, 10)

    def forward(self, tokens):
        output, _ = self.rnn(self.drop(self.encoder(tokens)))
        return self.decoder(self.drop(output))


model = RNNModel().eval()
with open("model.pt", "wb") as f:
    torch.save(model, f)
try:
    with open("model.pt", "rb") as f:
        torch.load(f)
except pickle.UnpicklingError as e:  # what PyTorch raises; minitensor's error is also a ValueError
    assert "__main__.RNNModel" in str(e) and "safe_globals" in str(e)
else:
    raise AssertionError("a whole model loaded without its classes allowed")
allowed = [RNNModel, torch.nn.modules.dropout.Dropout, torch.nn.modules.linear.Linear,
           torch.nn.modules.rnn.LSTM, torch.nn.modules.sparse.Embedding]
with open("model.pt", "rb") as f, safe_globals(allowed):
    loaded = torch.load(f)
assert get_safe_globals() == []
tokens = torch.tensor([[1, 2], [3, 4]])
assert torch.equal(loaded.eval()(tokens), model(tokens))
add_safe_globals(allowed)
assert type(torch.load("model.pt", map_location="cpu")) is RNNModel
clear_safe_globals()
print("ok")
"""


def test_torch_serialization_is_minitensors_and_whole_models_load_under_safe_globals(
    tmp_path: Path, run_python
) -> None:
    path = tmp_path / "whole_model.py"
    path.write_text(SCRIPT)
    assert run_python(["-m", "minitensor.compat", str(path)], tmp_path).stdout.strip() == "ok"
