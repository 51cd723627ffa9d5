"""A thin N-body driver over treetrav.bh_accelerations: kick-drift-kick
leapfrog with one global time step, in the caller's array framework (numpy,
or a GPU framework: the bodies then never leave the GPU)."""

from ._gravity import bh_accelerations


def leapfrog(pos, vel, masses, dt, steps, callback=None, **force):
    """Advances (pos, vel) by ``steps`` steps of ``dt`` and returns the new
    (pos, vel); ``force`` goes to bh_accelerations (theta, softening, G,
    multipole, ...). ``callback(step, pos, vel)``, if given, runs after each
    step (energies, snapshots)."""
    if steps < 0 or not dt > 0:
        raise ValueError(f"steps {steps} must be >= 0 and dt {dt} > 0")
    acc = bh_accelerations(pos, masses, **force)
    for step in range(steps):
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = bh_accelerations(pos, masses, **force)
        vel = vel + 0.5 * dt * acc
        if callback is not None:
            callback(step + 1, pos, vel)
    return pos, vel


def energy(pos, vel, masses, softening=0.0, G=1.0):
    """Kinetic and potential energy by direct summation (numpy, O(n^2)
    memory in blocks): for checking a run on small sets."""
    import numpy as np

    pos, vel, masses = (np.asarray(a, dtype=np.float64) for a in (pos, vel, masses))
    kinetic = 0.5 * float(np.sum(masses * np.sum(vel * vel, axis=1)))
    potential = 0.0
    block = 1024
    for first in range(0, len(pos), block):
        d = pos[first:first + block, None, :] - pos[None, :, :]
        r = np.sqrt(np.sum(d * d, axis=2) + softening * softening)
        rows = np.arange(first, min(first + block, len(pos)))
        r[np.arange(len(rows)), rows] = np.inf
        potential -= 0.5 * G * float(np.sum(masses[rows, None] * masses[None, :] / r))
    return kinetic, potential
