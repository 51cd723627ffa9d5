"""Periodic boxes (KDTree(boxsize=...)) and pair counts in bins
(treetrav.paircount), per backend, against scipy's periodic cKDTree and
numpy brute force. Grid points (small integers in a box of side 8): every
distance and image is exact in float32 and float64, with many ties."""

import numpy as np
import pytest
import scipy.spatial

import treetrav

BACKENDS = treetrav.backends()
SIDE = 8


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def grid(rng, n):
    return rng.integers(0, SIDE, size=(n, 3)).astype(np.float64)


def periodic_d2(x, data):
    d = np.abs(x[:, None, :] - data[None, :, :])
    d = np.minimum(d, SIDE - d)
    return (d * d).sum(axis=2)


def test_periodic_knn_equals_the_oracle_and_scipy(backend):
    rng = np.random.default_rng(3)
    data, x = grid(rng, 2000), grid(rng, 300)
    tree = treetrav.KDTree(data, backend=backend, boxsize=SIDE)
    d, i = tree.query(x, k=9)
    d2 = periodic_d2(x, data)
    order = np.argsort(d2, axis=1, kind="stable")[:, :9]
    np.testing.assert_array_equal(i, order)
    sd, _ = scipy.spatial.cKDTree(data, boxsize=SIDE).query(x, k=9)
    np.testing.assert_array_equal(d, sd)


def test_periodic_balls_and_pairs_equal_scipy(backend):
    rng = np.random.default_rng(4)
    data, x = grid(rng, 1500), grid(rng, 200)
    tree = treetrav.KDTree(data, backend=backend, boxsize=[SIDE, SIDE, SIDE])
    scipy_tree = scipy.spatial.cKDTree(data, boxsize=SIDE)
    for r in (1.0, 2.5, 3.99):  # up to just below L / 2
        np.testing.assert_array_equal(tree.query_ball_point(x, r, return_length=True),
                                      scipy_tree.query_ball_point(x, r, return_length=True))
        assert [sorted(v) for v in tree.query_ball_point(x[:20], r)] == \
            [sorted(v) for v in scipy_tree.query_ball_point(x[:20], r)]
    other = treetrav.KDTree(x, backend=backend, boxsize=SIDE)
    radii = [1.0, 2.0, 3.5]
    np.testing.assert_array_equal(tree.count_neighbors(other, radii),
                                  scipy_tree.count_neighbors(scipy.spatial.cKDTree(x, boxsize=SIDE), radii))


def test_periodic_bad_input(backend):
    data = np.full((10, 3), 1.0)
    data[3, 1] = SIDE  # outside [0, L)
    with pytest.raises(ValueError, match="row 3"):
        treetrav.KDTree(data, backend=backend, boxsize=SIDE)
    tree = treetrav.KDTree(np.ones((10, 3)), backend=backend, boxsize=SIDE)
    with pytest.raises(ValueError, match="radius"):
        tree.query_ball_point(np.ones((2, 3)), SIDE / 2, return_length=True)
    with pytest.raises(ValueError, match="queries: row 1"):
        tree.query(np.array([[1.0, 1, 1], [-0.5, 1, 1]]), k=2)


def double_loop(a, b, edges, box, auto, wa=None, wb=None):
    d = np.abs(a[:, None, :].astype(np.float64) - b[None, :, :].astype(np.float64))
    if box is not None:
        d = np.minimum(d, box - d)
    d2 = (d * d).sum(axis=2)
    keep = np.triu(np.ones(d2.shape, bool), 1) if auto else np.ones(d2.shape, bool)
    e2 = np.asarray(edges) ** 2
    counts = [int((keep & (d2 >= lo) & (d2 < hi)).sum()) for lo, hi in zip(e2[:-1], e2[1:])]
    weighted = None
    if wa is not None:
        w = np.outer(wa.astype(np.float64), wb.astype(np.float64))
        weighted = [float(w[keep & (d2 >= lo) & (d2 < hi)].sum()) for lo, hi in zip(e2[:-1], e2[1:])]
    return np.array(counts), weighted


@pytest.mark.parametrize("periodic", [True, False])
def test_paircount_equals_the_double_loop(backend, periodic):
    rng = np.random.default_rng(5)
    a = (rng.random((700, 3)) * 20).astype(np.float32)
    b = (rng.random((300, 3)) * 20).astype(np.float32)
    wa, wb = rng.uniform(0.5, 2, 700).astype(np.float32), rng.uniform(0.5, 2, 300).astype(np.float32)
    box = 20.0 if periodic else None
    for edges in (treetrav.log_edges(0.3, 9.5, 9), treetrav.linear_edges(0, 10, 5)):
        expected = double_loop(a, a, edges, box, True, wa, wa)
        got = treetrav.paircount(a, edges, boxsize=box, backend=backend)  # the group walk
        np.testing.assert_array_equal(got.counts, expected[0])
        assert (got.xi is not None) == periodic and got.weighted is None
        for strategy in ("group", "autoropes"):
            got = treetrav.paircount(a, edges, boxsize=box, weights=wa, backend=backend,
                                     strategy=strategy)
            np.testing.assert_array_equal(got.counts, expected[0])
            np.testing.assert_allclose(got.weighted, expected[1], rtol=1e-10)
        got = treetrav.paircount(a, edges, others=b, boxsize=box, weights=wa, others_weights=wb,
                                 backend=backend)
        counts, weighted = double_loop(b, a, edges, box, False, wb, wa)
        np.testing.assert_array_equal(got.counts, counts)
        np.testing.assert_allclose(got.weighted, weighted, rtol=1e-10)


def test_paircount_xi_of_a_uniform_box_is_zero(backend):
    points = np.random.default_rng(6).random((20000, 3)).astype(np.float32)
    got = treetrav.paircount(points, treetrav.linear_edges(0.03, 0.12, 3), boxsize=1.0,
                             backend=backend)
    assert np.all(np.abs(got.xi) < 4 / np.sqrt(got.counts.astype(float))), (got.xi, got.counts)


def test_paircount_bad_input(backend):
    points = np.random.default_rng(7).random((50, 3)).astype(np.float32)
    with pytest.raises(ValueError, match="edges"):
        treetrav.paircount(points, [0.1, 0.6], boxsize=1.0, backend=backend)  # beyond L / 2
    with pytest.raises(ValueError, match="edges"):
        treetrav.paircount(points, [0.2, 0.1], backend=backend)
    with pytest.raises(ValueError, match="group walk"):
        treetrav.paircount(points, [0.1, 0.2], others=points, strategy="group", backend=backend)
    with pytest.raises(ValueError, match="others_weights"):
        treetrav.paircount(points, [0.1, 0.2], others=points, weights=np.ones(50), backend=backend)
