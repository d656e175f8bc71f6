"""minitensor.utils.data against torch.utils.data: batch shapes and contents, order, drop_last,
samplers, collate rules, random_split lengths; reproducibility of shuffling."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    default_collate,
    random_split,
)

torch = pytest.importorskip("torch")
tdata = torch.utils.data


def as_plain(x):
    """A batch structure with Tensors (ours or torch's) as nested lists, for comparison."""
    if hasattr(x, "tolist") and not isinstance(x, (list, str)):
        return ("T", str(getattr(x, "dtype", "")).removeprefix("torch."), x.tolist())
    if isinstance(x, dict):
        return {k: as_plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [as_plain(v) for v in x])
    return x


class Squares(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float32), "y": i % 2, "name": f"s{i}", "w": 0.5 * i}


class TorchSquares(tdata.Dataset):
    __len__, __getitem__ = Squares.__len__, Squares.__getitem__


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (7, True), (10, False)])
def test_sequential_batches_equal_pytorchs(batch_size, drop_last) -> None:
    ours = list(DataLoader(Squares(), batch_size=batch_size, drop_last=drop_last))
    theirs = list(tdata.DataLoader(TorchSquares(), batch_size=batch_size, drop_last=drop_last))
    assert [as_plain(b) for b in ours] == [as_plain(b) for b in theirs]
    assert len(DataLoader(Squares(), batch_size=batch_size, drop_last=drop_last)) == len(theirs)


def test_tensor_dataset_batches_equal_pytorchs() -> None:
    x, y = np.arange(20.0, dtype=np.float32).reshape(10, 2), np.arange(10)
    ours = DataLoader(TensorDataset(mt.tensor(x), mt.tensor(y)), batch_size=4)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4)
    for (xa, ya), (xb, yb) in zip(ours, theirs, strict=True):
        assert xa.shape == tuple(xb.shape) and xa.tolist() == xb.tolist() and ya.tolist() == yb.tolist()
        assert xa.dtype == mt.float32 and ya.dtype == mt.int64


def test_batch_size_none_yields_converted_samples() -> None:
    ours = list(DataLoader(Squares(), batch_size=None))
    theirs = list(tdata.DataLoader(TorchSquares(), batch_size=None))
    assert [as_plain(b) for b in ours] == [as_plain(b) for b in theirs]


@pytest.mark.parametrize(
    "batch",
    [
        [1, 2, 3],
        [1.5, 2.0],
        [True, False],
        ["a", "b"],
        [np.float32(1.0), np.float32(2.0)],
        [np.array([1, 2]), np.array([3, 4])],
        [(1, "a", 2.0), (2, "b", 3.0)],
        [[1, 2], [3, 4]],
        [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
        [np.str_("ab"), np.str_("cd")],
        [np.bytes_(b"ab"), np.bytes_(b"cd")],
        [(np.str_("a"), 1), (np.str_("b"), 2)],
        [np.array(1.5), np.array(2.5)],
    ],
    ids=[
        "int",
        "float",
        "bool",
        "str",
        "np-scalar",
        "np-array",
        "tuple",
        "list",
        "dict",
        "np-str",
        "np-bytes",
        "np-str-in-tuple",
        "np-0d",
    ],  # fmt: skip
)
def test_default_collate_equals_pytorchs(batch) -> None:
    assert as_plain(default_collate(batch)) == as_plain(tdata.default_collate(batch))


def test_default_collate_refuses_arrays_of_strings_as_pytorch() -> None:
    batch = [np.array(["ab"]), np.array(["cd"])]
    with pytest.raises(TypeError, match="found"):
        tdata.default_collate(batch)
    with pytest.raises(TypeError, match="dtype <U2"):
        default_collate(batch)


@pytest.mark.parametrize("samples", [[(1, 2), (3, 4)], [(np.array([1.0]), "a")], [[1, 2]]])
def test_batch_size_none_turns_tuples_into_lists_as_pytorch(samples) -> None:
    ours = list(DataLoader(samples, batch_size=None))
    theirs = list(tdata.DataLoader(samples, batch_size=None))
    assert [as_plain(b) for b in ours] == [as_plain(b) for b in theirs]


def test_a_loader_over_numpy_strings_yields_lists_of_strings() -> None:
    items = [np.str_("x"), np.str_("y"), np.str_("z")]
    ours = list(DataLoader(items, batch_size=2))
    assert [as_plain(b) for b in ours] == [as_plain(b) for b in tdata.DataLoader(items, batch_size=2)]
    assert ours[0] == ["x", "y"]


def test_default_collate_namedtuple_and_tensors() -> None:
    Point = collections.namedtuple("Point", "x y")
    out = default_collate([Point(mt.tensor([1.0]), 1), Point(mt.tensor([2.0]), 2)])
    assert isinstance(out, Point) and out.x.tolist() == [[1.0], [2.0]] and out.y.tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object()])


def test_shuffle_is_a_permutation_reproducible_with_the_seed() -> None:
    ds = list(range(50))
    mt.manual_seed(3)
    first = [b.tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    second_epoch = [b.tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    mt.manual_seed(3)
    again = [b.tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    flat = sum(first, [])
    assert first == again and sorted(flat) == ds and flat != ds and first != second_epoch
    assert [len(b) for b in first] == [8] * 6 + [2]
    g1, g2 = mt.Generator().manual_seed(1), mt.Generator().manual_seed(1)
    a = [b.tolist() for b in DataLoader(ds, batch_size=50, shuffle=True, generator=g1)]
    assert a == [b.tolist() for b in DataLoader(ds, batch_size=50, shuffle=True, generator=g2)]


def test_samplers_and_batch_sampler_as_pytorch() -> None:
    assert list(SequentialSampler(range(4))) == list(tdata.SequentialSampler(range(4)))
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False)]:
        ours = BatchSampler(SequentialSampler(range(n)), bs, drop)
        theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    sampled = list(RandomSampler(range(5), replacement=True, num_samples=200))
    assert len(sampled) == 200 and set(sampled) == set(range(5))
    longer = list(RandomSampler(range(5), num_samples=12))
    assert len(longer) == 12 and sorted(longer[:10]) == sorted(list(range(5)) * 2)
    subset = list(SubsetRandomSampler([10, 20, 30], generator=mt.Generator().manual_seed(0)))
    assert sorted(subset) == [10, 20, 30]
    loader = DataLoader(list("abcdef"), sampler=[5, 0, 2], batch_size=2)
    assert list(loader) == [["f", "a"], ["c"]]
    loader = DataLoader(list(range(6)), batch_sampler=[[0, 1, 2], [5]])
    assert [b.tolist() for b in loader] == [[0, 1, 2], [5]] and len(loader) == 2
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)


def test_loader_option_conflicts_as_pytorch() -> None:
    for kwargs, message in [
        ({"sampler": [0], "shuffle": True}, "mutually exclusive with shuffle"),
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
        ({"batch_size": None, "drop_last": True}, "drop_last"),
        ({"num_workers": -1}, "num_workers"),
        ({"prefetch_factor": 2}, "num_workers > 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            DataLoader(list(range(3)), **kwargs)
        with pytest.raises(ValueError):
            tdata.DataLoader(list(range(3)), **kwargs)


def test_num_workers_loads_in_process_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="num_workers=4.*main process"):
        loader = DataLoader(list(range(5)), batch_size=2, num_workers=4, pin_memory=True, persistent_workers=True)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataLoader(list(range(5)), num_workers=0)


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(7))


class TorchStream(tdata.IterableDataset):
    __iter__ = Stream.__iter__


@pytest.mark.parametrize("batch_size, drop_last", [(3, False), (3, True), (None, False)])
def test_iterable_dataset_batches_equal_pytorchs(batch_size, drop_last) -> None:
    ours = [as_plain(b) for b in DataLoader(Stream(), batch_size=batch_size, drop_last=drop_last)]
    assert ours == [as_plain(b) for b in tdata.DataLoader(TorchStream(), batch_size=batch_size, drop_last=drop_last)]
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(), shuffle=True)


def test_subset_concat_and_tensor_dataset() -> None:
    ds = TensorDataset(mt.arange(6.0).reshape(3, 2), mt.tensor([7, 8, 9]))
    x, y = ds[2]
    assert x.tolist() == [4.0, 5.0] and y.item() == 9 and len(ds) == 3
    assert [s[1].item() for s in Subset(ds, [2, 0])] == [9, 7] and len(Subset(ds, [1])) == 1
    both = ConcatDataset([list("ab"), list("cde")])
    assert [both[i] for i in range(len(both))] == list("abcde") and both[-1] == "e"
    assert len(Squares() + Squares()) == 14
    with pytest.raises(ValueError, match="same size in dim 0"):
        TensorDataset(mt.zeros(3), mt.zeros(4))
    with pytest.raises(TypeError, match="tensors\\[1\\]"):
        TensorDataset(mt.zeros(3), [1, 2, 3])


@pytest.mark.parametrize(
    "n, lengths", [(10, [0.8, 0.2]), (11, [0.5, 0.3, 0.2]), (7, [0.25, 0.25, 0.25, 0.25]), (10, [3, 7]), (3, [1.0])]
)
def test_random_split_lengths_as_pytorch(n, lengths) -> None:
    ours = random_split(range(n), lengths, generator=mt.Generator().manual_seed(0))
    theirs = tdata.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))
    again = random_split(range(n), lengths, generator=mt.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]


def test_random_split_bad_lengths() -> None:
    with pytest.raises(ValueError, match="sum to 5.*has 6"):
        random_split(range(6), [2, 3])
    with pytest.raises(ValueError, match="between 0 and 1"):
        random_split(range(6), [1.5, -0.5])
    with pytest.warns(UserWarning, match="index 1 is 0"):
        random_split(range(2), [0.9, 0.1])


def test_random_sampler_with_replacement_is_lazy() -> None:
    """minGPT samples with replacement from RandomSampler(..., num_samples=int(1e10))."""
    sampler = iter(RandomSampler(range(3), replacement=True, num_samples=int(1e10)))
    first = [next(sampler) for _ in range(100)]
    assert set(first) == {0, 1, 2}
    assert len(RandomSampler(range(3), replacement=True, num_samples=int(1e10))) == int(1e10)


def test_weighted_random_sampler_frequencies_and_rules() -> None:
    from minitensor.utils.data import WeightedRandomSampler, get_worker_info

    drawn = list(WeightedRandomSampler([0.1, 0.0, 0.9], 5000, generator=mt.Generator().manual_seed(0)))
    freq = np.bincount(drawn, minlength=3) / 5000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.9], atol=0.03)
    once = list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False))
    assert sorted(once) == [0, 1, 2, 3] and len(WeightedRandomSampler([1.0, 1.0], 7)) == 7
    loader = DataLoader(list("ab"), batch_size=3, sampler=WeightedRandomSampler([0.0, 1.0], 6))
    assert list(loader) == [["b", "b", "b"], ["b", "b", "b"]]
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler([1.0], 0)
    assert get_worker_info() is None and tdata.get_worker_info() is None
