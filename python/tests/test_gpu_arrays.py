"""GPU arrays in and out (CUDA builds; run on the GPU machine by
scripts/device/python-bench.sh): torch and CuPy arrays are searched where they
lie, results come back on the GPU in the same framework, equal to the numpy
path's."""

import numpy as np
import pytest

import treetrav

pytestmark = pytest.mark.skipif("cuda" not in treetrav.backends(),
                                reason="a CPU build: no GPU arrays to take")


def frameworks():
    found = []
    try:
        import torch

        found.append(("torch", lambda a: torch.from_numpy(a).cuda(), lambda a: a.cpu().numpy(),
                      lambda a: a.is_cuda))
    except ImportError:
        pass
    try:
        import cupy

        found.append(("cupy", cupy.asarray, cupy.asnumpy, lambda a: isinstance(a, cupy.ndarray)))
    except ImportError:
        pass
    return found


@pytest.mark.parametrize("name, to_gpu, to_host, on_gpu", frameworks())
def test_gpu_arrays_give_the_numpy_answers_on_the_gpu(name, to_gpu, to_host, on_gpu):
    rng = np.random.default_rng(1)
    data = rng.integers(0, 16, size=(50000, 3)).astype(np.float32)
    x = rng.integers(0, 16, size=(20000, 3)).astype(np.float32)
    host = treetrav.KDTree(data, backend="cuda")
    want_d, want_i = host.query(x, k=10)
    tree = treetrav.KDTree(to_gpu(data), backend="cuda")
    d, i = tree.query(to_gpu(x), k=10)
    assert on_gpu(d) and on_gpu(i)
    np.testing.assert_array_equal(to_host(i), want_i)
    np.testing.assert_array_equal(to_host(d), want_d)
    counts = tree.query_ball_point(to_gpu(x), 2.0, return_length=True)
    assert on_gpu(counts)
    np.testing.assert_array_equal(to_host(counts), host.query_ball_point(x, 2.0, return_length=True))
    # float64 GPU arrays: float64 distances, the same neighbours
    d64, i64 = tree.query(to_gpu(x.astype(np.float64)), k=10)
    np.testing.assert_array_equal(to_host(i64), want_i)
    assert to_host(d64).dtype == np.float64
    pos = to_gpu(rng.random((5000, 3)).astype(np.float32))
    masses = to_gpu(np.full(5000, 1.0 / 5000, np.float32))
    a = treetrav.bh_accelerations(pos, masses, backend="cuda")
    assert on_gpu(a)
    np.testing.assert_allclose(to_host(a), treetrav.bh_accelerations(to_host(pos), to_host(masses),
                                                                     backend="cuda"), rtol=0, atol=0)


def test_the_cuda_backend_equals_the_host_backend():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 12, size=(30000, 3)).astype(np.float64)
    x = rng.integers(0, 12, size=(10000, 3)).astype(np.float64)
    for backend in treetrav.backends():
        if backend == "cuda":
            continue
        want = treetrav.KDTree(data, backend=backend).query(x, k=16)
        got = treetrav.KDTree(data, backend="cuda").query(x, k=16)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])


def test_a_gpu_array_for_a_host_backend_is_refused():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="a GPU array was given to the host backend"):
        treetrav.KDTree(torch.zeros((10, 3), device="cuda"), backend="openmp")
