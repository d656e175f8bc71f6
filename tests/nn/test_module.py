"""nn/module.py, the Module system: registration, traversal, modes, dtype, state dicts, repr
(containers: test_container.py; Parameter: test_parameter.py)."""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


class Block(nn.Module):
    def __init__(self, dim: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("steps", mt.zeros(1))
        self.register_buffer("cache", mt.zeros(2), persistent=False)

    def forward(self, x):
        return self.norm(self.fc(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2, bias=False))
        self.scale = nn.Parameter(mt.ones(1))

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x) * self.scale


NET_KEYS = [
    "scale",
    "embed.weight",
    "embed.bias",
    "blocks.0.steps",
    "blocks.0.fc.weight",
    "blocks.0.fc.bias",
    "blocks.0.norm.weight",
    "blocks.0.norm.bias",
    "blocks.1.steps",
    "blocks.1.fc.weight",
    "blocks.1.fc.bias",
    "blocks.1.norm.weight",
    "blocks.1.norm.bias",
    "head.0.weight",
    "head.0.bias",
    "head.2.weight",
]


# --------------------------------------------------------------- registration
def test_named_parameters_follow_pytorch_order():
    names = [n for n, _ in Net().named_parameters()]
    assert names == [k for k in NET_KEYS if not k.endswith("steps")]


def test_registration_by_assignment_and_replacement():
    m = nn.Module()
    m.w = nn.Parameter(mt.zeros(2))
    m.sub = nn.Linear(2, 2)
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    m.w = None  # a registered parameter may become None
    assert m.w is None and [n for n, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    with pytest.raises(TypeError, match="parameter 'w'"):
        m.w = mt.zeros(2)
    m.sub = nn.ReLU()
    assert list(m.parameters()) == []
    m.sub = nn.Parameter(mt.zeros(1))  # a name moves from _modules to _parameters
    assert "sub" not in m._modules and "sub" in m._parameters


def test_unknown_attribute_raises_attribute_error():
    m = nn.Linear(2, 3)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'wieght'"):
        _ = m.wieght
    assert not hasattr(m, "missing")


def test_assigning_parameter_before_init_raises():
    class Broken(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mt.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Broken()


def test_delattr_unregisters_and_dir_lists_registered_names():
    m = Block()
    assert {"fc", "norm", "steps", "forward"} <= set(dir(m))
    del m.fc
    del m.steps
    assert "fc" not in m._modules and "steps" not in m._buffers
    with pytest.raises(AttributeError):
        _ = m.fc


def test_register_buffer_and_parameter_validate_names_and_types():
    m = nn.Module()
    with pytest.raises(TypeError, match="buffer 'b'"):
        m.register_buffer("b", np.zeros(2))
    with pytest.raises(KeyError, match='without "."'):
        m.register_buffer("a.b", mt.zeros(1))
    with pytest.raises(TypeError, match="parameter 'p'"):
        m.register_parameter("p", mt.zeros(1))
    m.plain = 3
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("plain", mt.zeros(1))
    m.register_buffer("b", mt.zeros(2))
    m.b = mt.ones(2)  # assigning a Tensor to a buffer name replaces the buffer
    assert m._buffers["b"].numpy().tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="buffer 'b'"):
        m.b = 1.0


def _plain_containers(lib):
    """A module with plain lists/tuples/dicts of modules and parameters, built with ``lib``
    (minitensor.nn or torch.nn) and its Parameter/tensor factory."""
    m = lib.Module()
    m.fc = lib.Linear(2, 2)
    m.layers = [lib.Linear(2, 2), lib.Linear(2, 2)]
    m.pair = (lib.Linear(2, 1),)
    m.named = {"a": lib.Linear(2, 1)}
    return m


@pytest.mark.parametrize(
    "attribute, value, container",
    [
        ("layers", lambda: [nn.Linear(2, 2), nn.Linear(2, 2)], "nn.ModuleList"),
        ("pair", lambda: (nn.Linear(2, 1),), "nn.ModuleList"),
        ("named", lambda: {"a": nn.Linear(2, 1)}, "nn.ModuleDict"),
        ("mixed", lambda: [nn.ReLU(), 3], "nn.ModuleList"),
        ("ws", lambda: [nn.Parameter(mt.zeros(2))], "nn.ParameterList"),
        ("pdict", lambda: {"alpha": nn.Parameter(mt.ones(1))}, "nn.ParameterDict"),
    ],
)
def test_plain_containers_of_modules_are_not_registered_and_warn(attribute, value, container):
    """As PyTorch: a plain list/tuple/dict of Modules or Parameters stays a plain object, not registered;
    minitensor warns, naming the attribute and the container to use."""
    m = nn.Module()
    plain = value()
    with pytest.warns(UserWarning, match=rf"Module\.{attribute} is a plain .* not registered.*use {container}\("):
        setattr(m, attribute, plain)
    assert getattr(m, attribute) is plain
    assert list(m.parameters()) == [] and list(m.state_dict()) == [] and list(m.children()) == []


def test_plain_lists_of_other_things_do_not_warn():
    m = nn.Module()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.sizes = [1, 2]
        m.cache = []
        m.names = {"a": "b"}
        m.tensors = [mt.zeros(2)]
    assert m.sizes == [1, 2] and m.tensors[0].shape == (2,)


def test_plain_containers_match_torch_registration():
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="plain"):
        ours = _plain_containers(nn)
    theirs = _plain_containers(torch.nn)
    assert (
        [n for n, _ in ours.named_parameters()]
        == [n for n, _ in theirs.named_parameters()]
        == [
            "fc.weight",
            "fc.bias",
        ]
    )
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()] == ["fc"]
    ours.eval()
    assert not ours.fc.training and ours.layers[0].training  # train()/eval() do not reach the plain list


def test_parameter_list_and_dict_operations():
    plist = nn.ParameterList([nn.Parameter(mt.zeros(2))])
    plist.append(mt.ones(3))  # a plain Tensor is wrapped as a Parameter
    plist += [nn.Parameter(mt.zeros(1))]
    assert len(plist) == 3 and isinstance(plist[1], nn.Parameter) and plist[-1].shape == (1,)
    plist[0] = nn.Parameter(mt.ones(4))
    assert [p.shape for p in plist] == [(4,), (3,), (1,)]
    assert repr(plist).splitlines()[1].strip() == "(0): Parameter containing: [float32 of size (4,)]"
    with pytest.raises(TypeError, match="Parameter or Tensor"):
        plist.append(3.0)
    pdict = nn.ParameterDict({"a": nn.Parameter(mt.zeros(1))})
    pdict["b"] = mt.ones(2)
    assert list(pdict) == ["a", "b"] and "b" in pdict and len(pdict) == 2
    assert [k for k, _ in pdict.items()] == list(pdict.keys()) and len(list(pdict.values())) == 2
    del pdict["a"]
    assert list(pdict.named_parameters()) == [("b", pdict["b"])]


def test_shared_parameters_and_modules_are_listed_once():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(m.parameters())) == 2
    assert len(list(m.modules())) == 3  # Sequential, Linear, ReLU
    tied = nn.Module()
    tied.a = nn.Linear(3, 3)
    tied.b = nn.Linear(3, 3)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight", "a.bias", "b.bias"]
    # state_dict keeps both names of a tied weight, as PyTorch does
    assert list(tied.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]


def test_traversal_methods():
    net = Net()
    assert [n for n, _ in net.named_children()] == ["embed", "blocks", "head"]
    assert list(net.children())[1] is net.blocks
    names = [n for n, _ in net.named_modules()]
    assert names[:6] == ["", "embed", "blocks", "blocks.0", "blocks.0.fc", "blocks.0.norm"]
    assert names[-4:] == ["head", "head.0", "head.1", "head.2"]
    buffers = ["blocks.0.steps", "blocks.0.cache", "blocks.1.steps", "blocks.1.cache"]
    assert [n for n, _ in net.named_buffers()] == buffers
    assert len(list(net.buffers())) == 4
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.blocks[0].named_parameters(prefix="x")][0] == "x.fc.weight"


def test_forward_missing_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(mt.zeros(1))


# --------------------------------------------------------------------- modes
def test_train_eval_recurse_and_return_self():
    net = Net()
    assert net.eval() is net
    assert all(not m.training for m in net.modules())
    assert net.train() is net
    assert all(m.training for m in net.modules())
    net.blocks.train(False)
    assert net.training and not net.blocks[1].norm.training
    with pytest.raises(ValueError, match="bool"):
        net.train("yes")


def test_apply_visits_children_first_and_returns_self():
    seen = []
    net = Net()
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen[-1] == "Net" and seen[0] == "Linear"
    assert len(seen) == len(list(net.modules()))

    def zero_linear(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)

    net.apply(zero_linear)
    assert not net.head[2].weight.numpy().any()


def test_zero_grad_to_none_or_zeros():
    net = Net()
    net(mt.randn(5, 3)).sum().backward()
    params = list(net.parameters())
    assert all(p.grad is not None for p in params)
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in params)
    net.zero_grad()
    assert all(p.grad is None for p in params)


def test_requires_grad_freezes_parameters():
    net = Net().requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


# --------------------------------------------------------------------- dtype
def test_to_float64_converts_in_place_and_keeps_parameter_identity():
    net = Net()
    net(mt.randn(2, 3)).sum().backward()
    before = {n: p for n, p in net.named_parameters()}
    values = {n: p.numpy().copy() for n, p in before.items()}
    assert net.double() is net
    for name, p in net.named_parameters():
        assert p is before[name] and p.dtype == mt.float64 and p.grad.dtype == mt.float64
        np.testing.assert_array_equal(p.numpy(), values[name].astype(np.float64))
    assert all(b.dtype == mt.float64 for b in net.buffers())
    y = net(mt.randn(2, 3, dtype=mt.float64))
    assert y.dtype == mt.float64
    net.float()
    assert all(p.dtype == mt.float32 for p in net.parameters())
    assert net.to("cpu") is net
    with pytest.raises(TypeError, match="float dtype"):
        net.to(mt.int64)


def test_to_leaves_integer_buffers_alone():
    m = nn.Module()
    m.register_buffer("ids", mt.arange(3))
    m.to(mt.float64)
    assert m.ids.dtype == mt.int64


def test_deepcopy_copies_parameters():
    net = Net()
    twin = copy.deepcopy(net)
    for (n1, p1), (n2, p2) in zip(net.named_parameters(), twin.named_parameters()):
        assert n1 == n2 and p1 is not p2 and isinstance(p2, nn.Parameter)
        np.testing.assert_array_equal(p1.numpy(), p2.numpy())
    twin.embed.weight.numpy()[...] = 0
    assert net.embed.weight.numpy().any()


# ----------------------------------------------------------------- state dict
def test_state_dict_keys_order_and_shared_tensors():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict) and list(sd) == NET_KEYS
    assert all(type(v) is mt.Tensor and not v.requires_grad for v in sd.values())
    sd["embed.weight"].numpy()[...] = 7.0  # shares memory with the parameter, as in PyTorch
    assert (net.embed.weight.numpy() == 7.0).all()


def test_load_state_dict_roundtrip_from_arrays_and_tensors():
    a, b = Net(), Net()
    sd = a.state_dict()
    weight = b.embed.weight
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.embed.weight is weight
    for key, value in b.state_dict().items():
        np.testing.assert_array_equal(value, sd[key])
    x = mt.randn(2, 3)
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    c = Net()
    c.load_state_dict({k: v.numpy() for k, v in sd.items()})
    np.testing.assert_array_equal(c.head[0].weight.numpy(), sd["head.0.weight"].numpy())


def test_load_state_dict_casts_to_the_parameter_dtype():
    layer = nn.Linear(2, 2)
    layer.load_state_dict({"weight": np.ones((2, 2)), "bias": np.zeros(2)})
    assert layer.weight.dtype == mt.float32 and layer.weight.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda sd: sd.pop("blocks.1.fc.bias"), r'Missing key\(s\) in state_dict: "blocks.1.fc.bias"'),
        (lambda sd: sd.__setitem__("extra.weight", np.zeros(1)), r'Unexpected key\(s\) in state_dict: "extra.weight"'),
        (lambda sd: sd.__setitem__("head.0.weight", np.zeros((4, 5))), "size mismatch for head.0.weight"),
    ],
)
def test_load_state_dict_strict_errors_change_nothing(edit, match):
    net, other = Net(), Net()
    sd = other.state_dict()
    edit(sd)
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    with pytest.raises(RuntimeError, match=match):
        net.load_state_dict(sd)
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(value, before[key])


def test_load_state_dict_shape_mismatch_listed_with_missing_keys_in_one_error():
    net = Net()
    sd = net.state_dict()
    sd.pop("scale")
    sd["embed.bias"] = np.zeros(9)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    assert '"scale"' in str(info.value) and "size mismatch for embed.bias" in str(info.value)


def test_load_state_dict_non_strict_reports_keys_and_loads_the_rest():
    net, other = Net(), Net()
    sd = other.state_dict()
    sd.pop("scale")
    sd["junk"] = np.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result == (["scale"], ["junk"])
    assert result.missing_keys == ["scale"] and result.unexpected_keys == ["junk"]
    np.testing.assert_array_equal(net.embed.weight.numpy(), other.embed.weight.numpy())
    with pytest.raises(RuntimeError, match="size mismatch"):
        net.load_state_dict({"embed.bias": np.zeros(3)}, strict=False)


def test_load_state_dict_rejects_non_arrays_before_changing_anything():
    layer = nn.Linear(2, 2)
    before = layer.weight.numpy().copy()
    with pytest.raises(TypeError, match="'bias'"):
        layer.load_state_dict(OrderedDict([("weight", np.zeros((2, 2))), ("bias", [0.0, 0.0])]))
    np.testing.assert_array_equal(layer.weight.numpy(), before)


def test_non_persistent_buffers_are_not_saved_but_follow_to():
    block = Block()
    assert "cache" not in block.state_dict() and "steps" in block.state_dict()
    block.double()
    assert block.cache.dtype == mt.float64


# ---------------------------------------------------------------------- repr
def test_repr_is_nested_like_pytorch():
    net = Net()
    net.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.ReLU()])
    expected = (
        "Net(\n"
        "  (embed): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (blocks): ModuleList(\n"
        "    (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)\n"
        "    (3): ReLU()\n"
        "  )\n"
        "  (head): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=4, bias=True)\n"
        "    (1): ReLU()\n"
        "    (2): Linear(in_features=4, out_features=2, bias=False)\n"
        "  )\n"
        ")"
    )
    assert repr(net) == expected
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"


def test_extra_repr_with_children_goes_on_its_own_line():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Identity()

        def extra_repr(self):
            return "size=3"

    assert repr(WithExtra()) == "WithExtra(\n  size=3\n  (fc): Identity()\n)"


def test_parameters_and_zero_grad_walk_the_tree_as_named_modules():
    """parameters() and zero_grad() walk the modules without names; same order, each once,
    also with a module shared by two parents."""
    shared = nn.Linear(3, 3)
    net = nn.Sequential(
        nn.Linear(3, 4), nn.ModuleList([shared, nn.Sequential(nn.Linear(4, 2), shared)]), shared, nn.LayerNorm(3)
    )
    assert [id(m) for m in net._all_modules()] == [id(m) for _, m in net.named_modules()]
    assert [id(p) for p in net.parameters()] == [id(p) for _, p in net.named_parameters()]
    for p in net.parameters():
        p.grad = mt.ones(p.shape)
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and (p.grad.numpy() == 0).all() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
