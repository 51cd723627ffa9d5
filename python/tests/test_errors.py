"""Bad input raises ValueError with the library's message, naming the
argument, and leaves the tree usable."""

import numpy as np
import pytest

import treetrav


@pytest.fixture
def tree():
    return treetrav.KDTree(np.random.default_rng(1).random((100, 3)))


@pytest.mark.parametrize("data, words", [
    (np.zeros(5), "2-D"),
    (np.zeros((0, 3)), "no points"),
    (np.array([[0.0, np.nan, 1.0]]), "NaN"),
    (np.array([[0.0, np.inf, 1.0]]), "NaN or infinite"),
    (np.zeros((4, 3), dtype=complex), "not a real number type"),
    (np.array([["a", "b"]]), "not a real number type"),
    ([[0.0, 1.0], [1.0]], "data"),
])
def test_bad_data(data, words):
    with pytest.raises(ValueError, match=words):
        treetrav.KDTree(data)


@pytest.mark.parametrize("call, words", [
    (lambda t: t.query(np.zeros((2, 4))), "dimension 4, expected 3"),
    (lambda t: t.query(np.zeros((2, 3)), k=0), "k: 0"),
    (lambda t: t.query(np.zeros((2, 3)), k=129), "exceeds the largest k"),
    (lambda t: t.query(np.zeros((2, 3)), k=[0, 2]), "k: ranks"),
    (lambda t: t.query(np.array([[np.nan, 0, 0]])), "x: 1 values are NaN"),
    (lambda t: t.query(np.zeros((2, 3)), p=1), "p: only Euclidean"),
    (lambda t: t.query(np.zeros((2, 3)), eps=0.1), "eps"),
    (lambda t: t.query_ball_point(np.zeros((2, 3)), -1.0), "r: -1"),
    (lambda t: t.query_ball_point(np.zeros((2, 3)), [1.0, 2.0]), "one radius"),
    (lambda t: t.count_neighbors(t, 1.0, weights=np.ones(100)), "weights"),
    (lambda t: t.count_neighbors(t, [2.0, 1.0], cumulative=False), "ascending"),
])
def test_bad_arguments(tree, call, words):
    with pytest.raises(ValueError, match=words):
        call(tree)
    d, i = tree.query(np.zeros((1, 3)), k=2)  # still usable
    assert i.shape == (1, 2)


def test_unknown_backend_and_strategy_name_what_is_accepted():
    data = np.zeros((4, 3))
    with pytest.raises(ValueError, match="backend: 'tpu' is not an enabled backend"):
        treetrav.KDTree(data, backend="tpu")
    with pytest.raises(ValueError, match="strategy: unknown strategy 'bogus'.*autoropes"):
        treetrav.KDTree(data, strategy="bogus").query(data)


def test_bad_gravity_arguments():
    pos = np.random.default_rng(2).random((10, 3))
    with pytest.raises(ValueError, match="pos: points of dimension 2"):
        treetrav.bh_accelerations(pos[:, :2], np.ones(10))
    with pytest.raises(ValueError, match="masses: shape"):
        treetrav.bh_accelerations(pos, np.ones(9))
    with pytest.raises(ValueError, match="theta"):
        treetrav.bh_accelerations(pos, np.ones(10), theta=-1)
    with pytest.raises(ValueError, match="multipole: unknown order 'octupole'"):
        treetrav.bh_accelerations(pos, np.ones(10), multipole="octupole")
    with pytest.raises(ValueError, match="masses: 1 values are NaN"):
        treetrav.bh_accelerations(pos, np.r_[np.ones(9), np.nan])
