"""treetrav.bh_accelerations against direct summation, and the N-body driver."""

import numpy as np
import pytest

import treetrav
from treetrav import nbody

BACKENDS = treetrav.backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def plummer(rng, n):
    r = 1.0 / np.sqrt(rng.random(n) ** (-2.0 / 3.0) - 1.0)
    v = rng.normal(size=(n, 3))
    return r[:, None] * v / np.linalg.norm(v, axis=1)[:, None]


def direct(pos, masses, softening, G=1.0):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=2) + softening * softening
    np.fill_diagonal(r2, np.inf)
    return G * (masses[None, :, None] * d / r2[:, :, None] ** 1.5).sum(axis=1)


def relative_errors(a, exact):
    return np.linalg.norm(a - exact, axis=1) / np.linalg.norm(exact, axis=1)


def test_theta_zero_is_direct_summation(backend):
    rng = np.random.default_rng(1)
    pos, masses = plummer(rng, 1500), rng.random(1500) / 1500
    a = treetrav.bh_accelerations(pos, masses, theta=0.0, softening=0.01, backend=backend)
    assert a.shape == (1500, 3) and a.dtype == np.float64
    assert relative_errors(a, direct(pos, masses, 0.01)).max() < 1e-4


@pytest.mark.parametrize("multipole", ["monopole", "quadrupole"])
def test_forces_converge_as_theta_shrinks(backend, multipole):
    rng = np.random.default_rng(2)
    pos, masses = plummer(rng, 2500), np.full(2500, 1.0 / 2500)
    exact = direct(pos, masses, 0.005)
    p99 = []
    for theta in (0.8, 0.5, 0.3):
        a = treetrav.bh_accelerations(pos, masses, theta=theta, softening=0.005,
                                      multipole=multipole, backend=backend)
        p99.append(np.percentile(relative_errors(a, exact), 99))
    assert p99[0] > p99[1] > p99[2]
    assert p99[1] < (5e-3 if multipole == "quadrupole" else 2e-2)


def test_relative_criterion(backend):
    """alpha = 0 opens every cell; a smaller alpha is more accurate."""
    rng = np.random.default_rng(4)
    pos, masses = plummer(rng, 2000), np.full(2000, 1.0 / 2000)
    exact = direct(pos, masses, 0.01)
    a = treetrav.bh_accelerations(pos, masses, softening=0.01, opening="relative", alpha=0.0,
                                  backend=backend)
    assert relative_errors(a, exact).max() < 1e-4
    p99 = [np.percentile(relative_errors(treetrav.bh_accelerations(
        pos, masses, softening=0.01, opening="relative", alpha=alpha, backend=backend), exact), 99)
        for alpha in (0.01, 0.001)]
    assert p99[1] < p99[0] and p99[1] < 2e-3
    with pytest.raises(ValueError, match="alpha"):
        treetrav.bh_accelerations(pos, masses, opening="relative", alpha=-1.0, backend=backend)


def test_walks_and_dtypes_agree(backend):
    rng = np.random.default_rng(3)
    pos = plummer(rng, 2000).astype(np.float32)
    masses = np.full(2000, 1.0 / 2000, np.float32)
    group = treetrav.bh_accelerations(pos, masses, theta=0.5, softening=0.01, backend=backend)
    assert group.dtype == np.float32
    exact = direct(pos.astype(np.float64), masses.astype(np.float64), 0.01)
    for strategy in ("autoropes", "recursive"):
        try:
            a = treetrav.bh_accelerations(pos, masses, theta=0.5, softening=0.01,
                                          strategy=strategy, backend=backend)
        except ValueError as error:
            assert "not a force walk compiled" in str(error)
            continue
        assert np.percentile(relative_errors(a, exact), 99) < 5e-3


def test_leapfrog_conserves_energy():
    rng = np.random.default_rng(4)
    n = 400
    pos, masses = plummer(rng, n), np.full(n, 1.0 / n)
    vel = rng.normal(scale=0.3, size=(n, 3))
    e0 = sum(nbody.energy(pos, vel, masses, softening=0.05))
    pos, vel = nbody.leapfrog(pos, vel, masses, dt=1e-3, steps=40, theta=0.3, softening=0.05)
    e1 = sum(nbody.energy(pos, vel, masses, softening=0.05))
    assert abs(e1 - e0) / abs(e0) < 1e-3
