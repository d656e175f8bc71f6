"""The tables of PyTorch's names (storages, dtypes, nn classes, nn.functional functions) and the
allowlist, checked against PyTorch 2.13 itself."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitensor.nn as nn
from minitensor.utils.serialization import allowlist, torch_names
from minitensor.utils.serialization.modules import global_names
from minitensor.utils.serialization.pickle_reader import CheckpointError

torch = pytest.importorskip("torch")


def test_the_nn_class_table_is_pytorchs():
    classes = {
        name: cls
        for name, cls in vars(torch.nn).items()
        if inspect.isclass(cls) and issubclass(cls, torch.nn.Module) and cls.__module__.startswith("torch.nn.modules.")
    }
    assert set(torch_names.NN_CLASS_FILE) == set(classes)
    for name, cls in classes.items():
        assert torch_names.torch_class_names(name)[0] == f"{cls.__module__}.{cls.__qualname__}"
    alias = torch_names.NN_CLASS_ALIASES["Linear"][0]
    module, _, name = alias.rpartition(".")
    assert issubclass(getattr(__import__(module, fromlist=[name]), name), torch.nn.Linear)


def test_the_functional_table_is_pytorchs():
    for name, function in vars(torch.nn.functional).items():
        if callable(function) and not inspect.isclass(function) and getattr(function, "__name__", None) == name:
            if function.__module__ in ("torch", "torch._C._nn", "torch.nn.functional"):
                assert torch_names.torch_function_name(name) == f"{function.__module__}.{name}", name


def test_minitensor_classes_and_functions_go_by_pytorchs_names():
    assert global_names(nn.Linear) == (
        "torch.nn.modules.linear.Linear",
        "torch.nn.modules.linear.NonDynamicallyQuantizableLinear",
        "minitensor.nn.linear.Linear",
    )
    assert global_names(nn.functional.gelu)[0] == "torch._C._nn.gelu"
    assert global_names(nn.functional.relu)[0] == "torch.nn.functional.relu"
    for name in dir(nn):
        cls = getattr(nn, name)
        if inspect.isclass(cls) and issubclass(cls, nn.Module) and hasattr(torch.nn, name):
            torch_class = getattr(torch.nn, name)
            assert global_names(cls)[0] == f"{torch_class.__module__}.{torch_class.__qualname__}", name


def test_the_storage_and_dtype_tables_are_pytorchs():
    for dtype, storage in torch.storage._dtype_to_storage_type_map().items():
        name = str(dtype).removeprefix("torch.")
        if storage in torch_names.STORAGE_DTYPES:
            ours = torch_names.STORAGE_DTYPES[storage]
            assert ours == torch_names.DTYPES[name]
            if ours is not torch_names.BFLOAT16:
                assert np.dtype(ours) == torch.empty(0, dtype=dtype).numpy().dtype
        else:
            assert storage in torch_names.UNSUPPORTED_STORAGES, storage
    for dtype in {getattr(torch, n) for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)}:
        name = str(dtype).removeprefix("torch.")
        assert name in torch_names.DTYPES or name in torch_names.UNSUPPORTED_DTYPES, name


def test_every_name_pytorch_allows_means_something_or_says_what_minitensor_lacks():
    from torch import _weights_only_unpickler

    policy = allowlist.Allowlist(archive=None, byteorder="little", mmap=False, weights_only=True)
    for full in _weights_only_unpickler._get_allowed_globals():
        module, _, name = full.rpartition(".")
        try:
            policy.find(module, name)
        except CheckpointError as e:
            assert "minitensor does not have" in str(e), full


def test_a_name_pytorch_does_not_allow_is_refused_here_too():
    policy = allowlist.Allowlist(archive=None, byteorder="little", mmap=False, weights_only=True)
    for full in ("numpy.core.multiarray._reconstruct", "torch.nn.modules.linear.Linear", "builtins.print"):
        module, _, name = full.rpartition(".")
        with pytest.raises(CheckpointError, match="safe_globals"):
            policy.find(module, name)
