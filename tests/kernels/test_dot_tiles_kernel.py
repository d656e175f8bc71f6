"""kernels/dot_tiles.py: the numba product of rows ``c = a · bᵀ + beta · c`` against NumPy's, both tile
shapes (4 x 4 and 4 x 2, whichever this machine runs), on shapes with and without whole tiles, both
dtypes, strided operands, and where it pays (the shapes, and the machines whose BLAS it beats)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import tolerance

from minitensor.kernels import dot_tiles
from minitensor.kernels.runtime.cpu import cpu

TILES = {"4x4": dot_tiles.dot_rows_4x4, "4x2": dot_tiles.dot_rows_4x2}

# (M, K, N): one entry, rows and columns short of a tile, whole tiles, tiles with rows and columns left
# over, a sum shorter than a vector, a convolution weight gradient's one-image product.
SHAPES = [(1, 1, 1), (3, 5, 2), (4, 4, 4), (8, 3, 12), (9, 17, 6), (5, 130, 7), (16, 160, 150)]


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_dot_rows_matches_numpy(rng, tile, dtype, shape) -> None:
    m, k, n = shape
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)
    before = rng.standard_normal((m, n)).astype(dtype)
    got = {beta: before.copy() for beta in (0.0, 1.0, 0.5)}
    expected = {beta: before.copy() for beta in got}
    # both sum in their own order: each within k rounding errors of the terms' magnitudes (per entry)
    bound = 2 * k * np.finfo(dtype).eps * (np.abs(a) @ np.abs(b).T + np.abs(before))
    for beta in got:
        TILES[tile](a, b, got[beta], beta)
        dot_tiles.dot_rows_numpy(a, b, expected[beta], beta)
        assert np.all(np.abs(got[beta] - expected[beta]) <= bound)
    np.testing.assert_allclose(expected[1.0], a @ b.T + before, **tolerance(dtype))


@pytest.mark.parametrize("tile", TILES)
def test_beta_zero_never_reads_the_output(rng, tile) -> None:
    """With beta 0 the output may hold anything (an ``np.empty``): NaN and inf there do not leak."""
    a, b = rng.standard_normal((6, 9)), rng.standard_normal((5, 9))
    c = np.full((6, 5), np.nan)
    c[0, 0] = np.inf
    TILES[tile](a, b, c, 0.0)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-12)


@pytest.mark.parametrize("tile", TILES)
def test_strided_operands_give_the_same_product(rng, tile) -> None:
    a = rng.standard_normal((9, 20)).astype(np.float32)[:, ::2]
    b = np.asfortranarray(rng.standard_normal((7, 10)).astype(np.float32))
    c = np.empty((9, 7), np.float32)
    TILES[tile](a, b, c, 0.0)
    np.testing.assert_allclose(c, a @ b.T, **tolerance("float32"))


@pytest.mark.parametrize("flags, tile", [({"avx2", "avx512f"}, "4x4"), ({"avx2", "fma"}, "4x2"), (set(), "4x2")])
def test_the_tile_fits_the_vector_registers(flags, tile) -> None:
    """4 x 4 tiles with AVX-512's 32 vector registers, 4 x 2 with AVX2's 16 (or none known); this
    machine runs the one its flags ask for."""
    assert (
        dot_tiles.dot_rows_4x4 if dot_tiles.registers_for_4x4(frozenset(flags)) else dot_tiles.dot_rows_4x2
    ) is TILES[tile]
    here = "4x4" if dot_tiles.registers_for_4x4(cpu()["flags"]) else "4x2"
    assert dot_tiles.dot_rows is TILES[here]


def test_the_tiles_pay_for_long_sums_on_operands_that_fit_the_cache() -> None:
    assert dot_tiles.pays(dot_tiles.MIN_SUM, 1 << 20)
    assert not dot_tiles.pays(dot_tiles.MIN_SUM - 1, 1 << 20)
    assert not dot_tiles.pays(1024, dot_tiles.MAX_B_BYTES + 1)


# (M, K, N) of whole products on the tiles: whole tiles, rows beyond the last tile (the last band takes them)
PRODUCTS = [(1024, 256, 64), (1030, 300, 57)]


@pytest.fixture
def tiles_beat_blas(monkeypatch):
    """A machine where whole products on the tiles beat BLAS (the AMD VM's; on others ``product`` runs
    BLAS and these tests would not reach the tiles)."""
    monkeypatch.setattr(dot_tiles, "tiles_beat_blas_here", lambda: True)


@pytest.mark.parametrize(
    "vendor, flags, kernels, expected",
    [
        ("AuthenticAMD", {"avx2", "avx512f"}, "Haswell", True),  # the AMD VM (Zen 5), OPENBLAS_CORETYPE=Haswell
        ("AuthenticAMD", {"avx2", "avx512f"}, "Zen", True),
        ("AuthenticAMD", {"avx2", "avx512f"}, "SkylakeX", False),  # BLAS's own AVX-512 kernels
        ("AuthenticAMD", {"avx2"}, "Zen", False),  # no wider vectors for the tiles
        ("GenuineIntel", {"avx2", "avx512f"}, "SkylakeX", False),  # the Intel VM (Emerald Rapids)
        ("GenuineIntel", {"avx2", "avx512f"}, "Haswell", False),  # LLVM's 256-bit vectors on Intel
        ("AuthenticAMD", {"avx2", "avx512f"}, "", False),  # another BLAS than OpenBLAS
    ],
)
def test_whole_products_take_the_tiles_only_where_their_vectors_are_wider_than_blas(vendor, flags, kernels, expected):
    assert dot_tiles.tiles_beat_blas(vendor, frozenset(flags), kernels) is expected


def test_this_machine_is_judged_from_its_cpu_and_blas_kernels() -> None:
    from minitensor.kernels.runtime import blas
    from minitensor.kernels.runtime.cpu import cpu

    info = cpu()
    assert isinstance(info["vendor"], str) and isinstance(info["model"], str)
    assert isinstance(info["flags"], frozenset) and isinstance(blas.core_name(), str)
    here = dot_tiles.tiles_beat_blas(info["vendor"], info["flags"], blas.core_name())
    assert dot_tiles.tiles_beat_blas_here() is here


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", PRODUCTS, ids=lambda s: "x".join(map(str, s)))
def test_product_on_the_tiles_matches_numpy_on_one_thread_and_on_blas_threads(
    rng, dtype, shape, threads, two_blas_threads, tiles_beat_blas, monkeypatch
) -> None:
    """``product`` takes the tiles (serial on one thread; on two, each BLAS thread a band of rows, the
    region checked to run) and gives NumPy's product within the rounding of its sums; b may be a
    transpose (a weight's, for an input gradient), which it copies into rows first."""
    import minitensor as mt

    mt.set_num_threads(threads)
    regions = []
    real_run = dot_tiles.blas_threads.run
    monkeypatch.setattr(dot_tiles.blas_threads, "run", lambda task, r: (regions.append(len(r)), real_run(task, r)))
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(dtype)
    for b in (rng.standard_normal((n, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype).T):
        out = np.full((m, n), np.nan, dtype)
        assert dot_tiles.tiles_pay(a, b, out)
        assert dot_tiles.product(a, b, out) is out
        bound = 2 * k * np.finfo(dtype).eps * (np.abs(a) @ np.abs(b).T)
        assert np.all(np.abs(out - a @ b.T) <= bound)
    assert regions == ([2, 2] if threads == 2 else [])


def test_product_leaves_short_sums_small_products_and_other_layouts_to_blas(rng, tiles_beat_blas, monkeypatch) -> None:
    """Sums under ``PRODUCT_MIN_SUM``, products under ``PRODUCT_MIN_MACS``, a strided ``a``, mixed dtypes,
    the JIT off and a machine where the tiles lose take NumPy's matmul (the same numbers as ``a @ bᵀ``,
    bit for bit)."""
    import minitensor as mt

    long_sum = dot_tiles.PRODUCT_MIN_SUM
    cases = [
        (rng.standard_normal((4096, long_sum - 1)), rng.standard_normal((64, long_sum - 1))),
        (rng.standard_normal((16, long_sum)), rng.standard_normal((16, long_sum))),
        (rng.standard_normal((1024, 2 * long_sum))[:, ::2], rng.standard_normal((256, long_sum))),
        (rng.standard_normal((1024, long_sum)).astype(np.float32), rng.standard_normal((256, long_sum))),
    ]
    for a, b in cases:
        out = np.empty((a.shape[0], b.shape[0]), np.result_type(a, b))
        assert not dot_tiles.tiles_pay(a, b, out)
        np.testing.assert_array_equal(dot_tiles.product(a, b), a @ b.T)
    a, b = rng.standard_normal((1024, long_sum)), rng.standard_normal((256, long_sum))
    with pytest.raises(ValueError, match="matmul"):  # (shapes that do not fit: NumPy's error, no kernel)
        dot_tiles.product(a, rng.standard_normal((256, long_sum + 4)))
    with mt.jit_disabled():
        assert not dot_tiles.tiles_pay(a, b, np.empty((1024, 256)))
    assert dot_tiles.tiles_pay(a, b, np.empty((1024, 256)))
    monkeypatch.setattr(dot_tiles, "tiles_beat_blas_here", lambda: False)
    assert not dot_tiles.tiles_pay(a, b, np.empty((1024, 256)))
    np.testing.assert_array_equal(dot_tiles.product(a, b), a @ b.T)
