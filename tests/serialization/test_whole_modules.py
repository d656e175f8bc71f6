"""Whole modules (torch.save(model)): refused by default, rebuilt for the classes allowed with
safe_globals / add_safe_globals (or weights_only=False), in PyTorch's layout both ways: a module saved
here runs in PyTorch with the same outputs, and one PyTorch saved runs here."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import serialization


@pytest.fixture(autouse=True)
def no_safe_globals_left():
    """Each test starts and ends with nothing allowed."""
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


def saved(save, obj) -> io.BytesIO:
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    return buffer


def classes(module, library) -> list:
    """The classes a whole ``module`` is made of, as ``library``'s (for safe_globals)."""
    found = {type(m).__name__ for m in module.modules()}
    if library is mt:  # MultiheadAttention's out_proj: minitensor's Linear
        found = {"Linear" if name == "NonDynamicallyQuantizableLinear" else name for name in found}
    return [getattr(library.nn, name) for name in sorted(found)]


def _sequential(lib):
    layers = [lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Dropout(0.5), lib.nn.Linear(6, 2), lib.nn.GELU()]
    return lib.nn.Sequential(*layers)


def _encoder(lib):
    return lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 2, enable_nested_tensor=False)


# name -> (make(library), input shape, what the output is: a tensor (False), a tuple (True), attention's)
CASES = {
    "Linear": (lambda lib: lib.nn.Linear(4, 3), (2, 4), False),
    "Sequential": (_sequential, (3, 4), False),
    "LayerNorm": (lambda lib: lib.nn.LayerNorm(4), (2, 4), False),
    "LSTM": (lambda lib: lib.nn.LSTM(4, 5, num_layers=2, bidirectional=True), (3, 2, 4), True),
    "GRU": (lambda lib: lib.nn.GRU(4, 5, batch_first=True), (2, 3, 4), True),
    "RNN": (lambda lib: lib.nn.RNN(4, 5, nonlinearity="relu"), (3, 2, 4), True),
    "LSTMCell": (lambda lib: lib.nn.LSTMCell(4, 5), (2, 4), True),
    "MultiheadAttention": (lambda lib: lib.nn.MultiheadAttention(8, 2), (3, 2, 8), "attention"),
    "EncoderLayer": (lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, activation="gelu"), (3, 2, 8), False),
    "EncoderLayer-norm-first": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, norm_first=True, batch_first=True),
        (2, 3, 8),
        False,
    ),
    "TransformerEncoder": (_encoder, (3, 2, 8), False),
}


def _run(case: str, module, library, x: np.ndarray) -> np.ndarray:
    _, _, kind = CASES[case]
    module.eval()
    with library.no_grad():
        inputs = library.tensor(x)
        out = module(inputs, inputs, inputs) if kind == "attention" else module(inputs)
    out = out[0] if kind else out
    return out.numpy() if library is mt else out.detach().numpy()


@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's nested-tensor notes about its fast path
        yield


@pytest.mark.parametrize("case", CASES)
def test_a_minitensor_module_runs_in_pytorch(case, rng, quiet, torch):
    make, shape, _ = CASES[case]
    mt.manual_seed(0)
    ours = make(mt)
    x = rng.normal(0, 1, shape).astype(np.float32)
    with torch.serialization.safe_globals(classes(ours, torch) + [torch.nn.functional.relu, torch.nn.functional.gelu]):
        theirs = torch.load(saved(mt.save, ours))
    assert type(theirs) is getattr(torch.nn, type(ours).__name__)
    np.testing.assert_allclose(_run(case, theirs, torch, x), _run(case, ours, mt, x), rtol=1e-5, atol=1e-5)
    assert repr(theirs)  # every attribute PyTorch's repr reads is there


@pytest.mark.parametrize("case", CASES)
def test_a_pytorch_module_runs_in_minitensor(case, rng, quiet, torch):
    make, shape, _ = CASES[case]
    torch.manual_seed(0)
    theirs = make(torch)
    x = rng.normal(0, 1, shape).astype(np.float32)
    with serialization.safe_globals(classes(theirs, mt) + [nn.functional.relu, nn.functional.gelu]):
        ours = mt.load(saved(torch.save, theirs))
    assert type(ours) is getattr(nn, type(theirs).__name__)
    np.testing.assert_allclose(_run(case, ours, mt, x), _run(case, theirs, torch, x), rtol=1e-5, atol=1e-5)
    assert isinstance(ours.state_dict(), dict) and list(ours.state_dict()) == list(theirs.state_dict())


def test_an_embedding_crosses_both_ways(torch):
    ours = nn.Embedding(10, 4, padding_idx=0)
    with torch.serialization.safe_globals([torch.nn.Embedding]):
        theirs = torch.load(saved(mt.save, ours))
    ids = [[1, 0, 9]]
    np.testing.assert_array_equal(theirs(torch.tensor(ids)).detach().numpy(), ours(mt.tensor(ids)).numpy())
    assert theirs.padding_idx == 0 and theirs.max_norm is None
    with serialization.safe_globals([nn.Embedding]):
        again = mt.load(saved(torch.save, theirs))
    np.testing.assert_array_equal(again(mt.tensor(ids)).numpy(), ours(mt.tensor(ids)).numpy())


class TinyNet(nn.Module):
    """A user's model: its own attributes, a buffer that is not saved in state_dict, tied weights."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.out = nn.Linear(4, 7, bias=False)
        self.out.weight = self.embed.weight  # tied
        self.register_buffer("scale", mt.tensor(0.5), persistent=False)
        self.name, self.sizes = "tiny", (7, 4)

    def forward(self, ids):
        return self.out(self.embed(ids) * self.scale)


def test_loading_a_whole_module_is_refused_naming_the_class():
    buffer = saved(mt.save, TinyNet())
    with pytest.raises(ValueError, match=r"TinyNet.*safe_globals") as info:
        mt.load(buffer)
    assert "test_whole_modules.TinyNet" in str(info.value)
    buffer.seek(0)
    with serialization.safe_globals([TinyNet]), pytest.raises(ValueError, match="Embedding.*safe_globals"):
        mt.load(buffer)  # each class must be allowed, the sub-modules' too


def test_an_allowed_user_module_is_rebuilt_with_its_attributes_and_tied_weights():
    model = TinyNet()
    with serialization.safe_globals([TinyNet, nn.Embedding, nn.Linear]):
        loaded = mt.load(saved(mt.save, model))
    assert serialization.get_safe_globals() == []  # the block's classes are allowed in it only
    assert type(loaded) is TinyNet and loaded.name == "tiny" and loaded.sizes == (7, 4)
    assert loaded.out.weight is loaded.embed.weight and isinstance(loaded.out.weight, nn.Parameter)
    assert "scale" not in loaded.state_dict() and loaded.scale.item() == 0.5
    ids = mt.tensor([[1, 2, 3]])
    np.testing.assert_array_equal(loaded(ids).numpy(), model(ids).numpy())
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]


def test_weights_only_false_rebuilds_imported_module_classes():
    loaded = mt.load(saved(mt.save, TinyNet()), weights_only=False)  # TinyNet, Embedding, Linear: none allowed
    assert type(loaded) is TinyNet and loaded.out.weight is loaded.embed.weight
    assert serialization.get_safe_globals() == []


def test_add_safe_globals_get_and_clear():
    serialization.add_safe_globals([TinyNet, (nn.Linear, "somewhere.OldLinear")])
    serialization.add_safe_globals([TinyNet])  # once is enough
    assert serialization.get_safe_globals() == [TinyNet, (nn.Linear, "somewhere.OldLinear")]
    serialization.add_safe_globals([nn.Embedding, nn.Linear])
    assert type(mt.load(saved(mt.save, TinyNet()))) is TinyNet
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(TypeError, match="list"):
        serialization.add_safe_globals(TinyNet)
    with pytest.raises(ValueError, match="length 3"):
        serialization.add_safe_globals([(TinyNet, "a", "b")])


def test_a_module_with_hooks_is_refused_on_save(tmp_path):
    model = nn.Linear(2, 2)
    handle = model.register_forward_hook(lambda m, args, out: None)
    with pytest.raises(TypeError, match=r"obj is a Linear with hooks.*remove"):
        mt.save(model, tmp_path / "m.pt")
    handle.remove()
    mt.save(model, tmp_path / "m.pt")
    assert (tmp_path / "m.pt").exists()


def test_a_user_module_crosses_to_pytorch_under_its_file_name(torch):
    class TorchTinyNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(7, 4)
            self.out = torch.nn.Linear(4, 7, bias=False)

        def forward(self, ids):
            return self.out(self.embed(ids) * self.scale)

    model = TinyNet()
    name = f"{TinyNet.__module__}.TinyNet"  # what the file names: the same class in a PyTorch program
    with torch.serialization.safe_globals([(TorchTinyNet, name), torch.nn.Embedding, torch.nn.Linear]):
        theirs = torch.load(saved(mt.save, model))
    assert type(theirs) is TorchTinyNet and theirs.out.weight is theirs.embed.weight
    ids = [[1, 2, 3]]
    ours = model(mt.tensor(ids)).numpy()  # float32 products: BLAS may sum in another order
    np.testing.assert_allclose(theirs(torch.tensor(ids)).detach().numpy(), ours, rtol=1e-5, atol=1e-6)


def test_an_encoder_layer_from_pytorch_gets_minitensors_dropouts(quiet, torch):
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.25)
    with serialization.safe_globals(classes(theirs, mt) + [nn.functional.relu]):
        ours = mt.load(saved(torch.save, theirs))
    fresh = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.25)
    assert list(ours._modules) == list(fresh._modules)  # dropout1 (attention), dropout2 (inside FF), dropout3
    assert (ours.d_model, ours.nhead, ours.batch_first) == (8, 2, False)
    assert ours.dropout2 is not ours.dropout3 and ours.dropout3.p == 0.25
    with torch.serialization.safe_globals(classes(ours, torch) + [torch.nn.functional.relu]):
        back = torch.load(saved(mt.save, ours))
    assert list(back._modules) == list(theirs._modules) and back.activation_relu_or_gelu == 1
