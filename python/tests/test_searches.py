"""treetrav.KDTree and knn_brute against scipy's cKDTree and brute force,
on every backend of the build (each test is instantiated per backend)."""

import numpy as np
import pytest
import scipy.spatial

import treetrav

BACKENDS = treetrav.backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def grid_points(rng, n, m, side=8):
    """Small integers: every distance is exact in float32 and float64, and
    there are many ties (equal distances), broken by index."""
    return rng.integers(0, side, size=(n, m)).astype(np.float64)


def oracle(data, x, k):
    """Brute force in float64, ties by index (a stable sort of distances)."""
    d2 = ((x[:, None, :] - data[None, :, :]) ** 2).sum(axis=2)
    order = np.argsort(d2, axis=1, kind="stable")[:, :k]
    return np.sqrt(np.take_along_axis(d2, order, axis=1)), order


def test_knn_on_ties_equals_the_oracle_and_scipys_distances(backend):
    rng = np.random.default_rng(1)
    data, x = grid_points(rng, 3000, 3), grid_points(rng, 500, 3)
    tree = treetrav.KDTree(data, backend=backend)
    d, i = tree.query(x, k=12)
    od, oi = oracle(data, x, 12)
    sd, _ = scipy.spatial.cKDTree(data).query(x, k=12)
    assert d.dtype == np.float64 and i.dtype == np.int64 and d.shape == (500, 12)
    np.testing.assert_array_equal(d, od)
    np.testing.assert_array_equal(d, sd)
    np.testing.assert_array_equal(i, oi)  # ties by index


def test_knn_on_random_points_matches_scipy(backend):
    rng = np.random.default_rng(2)
    data = rng.random((20000, 3)).astype(np.float32)
    x = rng.random((4000, 3)).astype(np.float32)
    d, i = treetrav.KDTree(data, backend=backend).query(x, k=10)
    sd, si = scipy.spatial.cKDTree(data).query(x, k=10)
    assert d.dtype == np.float32  # float32 in, float32 out
    np.testing.assert_allclose(d, sd, rtol=2e-6, atol=1e-7)
    # Neighbours differ only where float32 and float64 order near-ties differently.
    assert (i == si).mean() > 0.9999


def test_every_strategy_and_order_gives_the_same_answers(backend):
    rng = np.random.default_rng(3)
    data, x = grid_points(rng, 2000, 3), grid_points(rng, 300, 3)
    reference = treetrav.KDTree(data, backend=backend).query(x, k=7)
    for strategy in ("recursive", "autoropes", "lockstep", "fsm"):
        for sorted_ in (False, True):
            try:
                tree = treetrav.KDTree(data, backend=backend, strategy=strategy, sorted=sorted_)
                got = tree.query(x, k=7)
            except ValueError as error:  # a walk not compiled for this backend
                assert "not a tree walk compiled" in str(error)
                continue
            np.testing.assert_array_equal(got[0], reference[0])
            np.testing.assert_array_equal(got[1], reference[1])


def test_query_shapes_follow_scipy(backend):
    rng = np.random.default_rng(4)
    data = rng.random((50, 2))
    tree = treetrav.KDTree(data, backend=backend)
    ref = scipy.spatial.cKDTree(data)
    d, i = tree.query(data[3])  # one point, k=1: scalars
    assert np.ndim(d) == 0 and np.ndim(i) == 0 and int(i) == 3 and float(d) == 0.0
    d, i = tree.query(rng.random((4, 5, 2)), k=3)
    assert d.shape == (4, 5, 3) and i.shape == (4, 5, 3)
    d, i = tree.query(rng.random((6, 2)), k=1)
    assert d.shape == (6,) and i.shape == (6,)
    x = rng.random((6, 2))
    d, i = tree.query(x, k=[1, 4])
    sd, si = ref.query(x, k=[1, 4])
    assert d.shape == (6, 2)
    np.testing.assert_array_equal(i, si)
    d, i = tree.query(np.empty((0, 2)), k=2)
    assert d.shape == (0, 2) and i.shape == (0, 2)


def test_more_neighbours_than_points_and_the_upper_bound_give_inf_and_n(backend):
    data = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    tree = treetrav.KDTree(data, backend=backend)
    d, i = tree.query([[0.0, 0, 0]], k=5)
    np.testing.assert_array_equal(d, [[0, 1, 2, np.inf, np.inf]])
    np.testing.assert_array_equal(i, [[0, 1, 2, 3, 3]])
    # scipy's bound is strict: the point at distance exactly 1 is left out.
    d, i = tree.query([[0.0, 0, 0]], k=3, distance_upper_bound=1.0)
    sd, si = scipy.spatial.cKDTree(data).query([[0.0, 0, 0]], k=3, distance_upper_bound=1.0)
    np.testing.assert_array_equal(d, sd)
    np.testing.assert_array_equal(i, si)


def test_fortran_ordered_float32_is_read_in_place_and_gives_the_same_answers(backend):
    rng = np.random.default_rng(5)
    data = rng.random((3000, 4)).astype(np.float32)
    x = rng.random((200, 4)).astype(np.float32)
    tree = treetrav.KDTree(data, backend=backend)
    c = tree.query(x, k=5)
    f = tree.query(np.asfortranarray(x), k=5)
    wide = np.zeros((200, 8), np.float32)
    wide[:, ::2] = x
    s = tree.query(wide[:, ::2], k=5)  # strided
    for got in (f, s):
        np.testing.assert_array_equal(got[0], c[0])
        np.testing.assert_array_equal(got[1], c[1])
    np.testing.assert_array_equal(treetrav.KDTree(np.asfortranarray(data), backend=backend)
                                  .query(x, k=5)[1], c[1])


def test_ball_points_and_lengths_equal_scipys_on_ties(backend):
    rng = np.random.default_rng(6)
    data, x = grid_points(rng, 2000, 3), grid_points(rng, 300, 3)
    tree, ref = treetrav.KDTree(data, backend=backend), scipy.spatial.cKDTree(data)
    for r in (1.0, 2.0, 3.0):  # points exactly at r count (inclusive)
        got = tree.query_ball_point(x, r)
        want = ref.query_ball_point(x, r, return_sorted=True)
        assert got.dtype == object and got.shape == (300,)
        assert all(a == b for a, b in zip(got, want))
        np.testing.assert_array_equal(tree.query_ball_point(x, r, return_length=True),
                                      ref.query_ball_point(x, r, return_length=True))
    assert tree.query_ball_point(x[0], 2.0) == sorted(ref.query_ball_point(x[0], 2.0))


def test_count_neighbors_equals_scipy(backend):
    rng = np.random.default_rng(7)
    a, b = grid_points(rng, 1500, 3), grid_points(rng, 700, 3)
    ta, tb = treetrav.KDTree(a, backend=backend), treetrav.KDTree(b, backend=backend)
    sa, sb = scipy.spatial.cKDTree(a), scipy.spatial.cKDTree(b)
    radii = [1.0, 1.5, 2.0, 3.0]
    assert ta.count_neighbors(tb, 2.0) == sa.count_neighbors(sb, 2.0)
    np.testing.assert_array_equal(ta.count_neighbors(tb, radii), sa.count_neighbors(sb, radii))
    np.testing.assert_array_equal(ta.count_neighbors(tb, radii, cumulative=False),
                                  sa.count_neighbors(sb, radii, cumulative=False))
    assert ta.count_neighbors(ta, 1.0) == sa.count_neighbors(sa, 1.0)


def test_knn_brute_at_high_dimension_equals_the_oracle(backend):
    rng = np.random.default_rng(8)
    data, x = grid_points(rng, 1500, 24, side=3), grid_points(rng, 200, 24, side=3)
    d, i = treetrav.knn_brute(data, x, k=9, backend=backend)
    od, oi = oracle(data, x, 9)
    np.testing.assert_array_equal(d, od)
    np.testing.assert_array_equal(i, oi)
    # and the same as the tree at a dimension the tree takes
    low = grid_points(rng, 800, 5)
    np.testing.assert_array_equal(treetrav.knn_brute(low, low[:50], k=4, backend=backend)[1],
                                  treetrav.KDTree(low, backend=backend).query(low[:50], k=4)[1])


def test_results_are_the_same_in_passes(backend):
    rng = np.random.default_rng(9)
    data, x = grid_points(rng, 2000, 3), grid_points(rng, 1000, 3)
    whole = treetrav.KDTree(data, backend=backend).query(x, k=6)
    passes = treetrav.KDTree(data, backend=backend, chunk=77).query(x, k=6)
    np.testing.assert_array_equal(passes[1], whole[1])
    counts = treetrav.KDTree(data, backend=backend, chunk=33).query_ball_point(
        x, 2.0, return_length=True)
    np.testing.assert_array_equal(
        counts, treetrav.KDTree(data, backend=backend).query_ball_point(x, 2.0, return_length=True))
