"""treetrav: repeated tree searches and Barnes-Hut gravity on CPUs and GPUs.

    KDTree / cKDTree   scipy.spatial.cKDTree's interface: query,
                       query_ball_point, count_neighbors
    knn_brute          exhaustive k nearest neighbours at any dimension
    paircount          pair counts in radial bins (DD, xi), periodic or not
    bh_accelerations   Barnes-Hut gravitational accelerations
    nbody.leapfrog     a thin N-body driver over bh_accelerations
    backends()         the Kokkos backends of this build ("serial", "openmp", "cuda")
"""

import atexit as _atexit

from . import _core
from ._gravity import bh_accelerations
from ._kdtree import KDTree, cKDTree, knn_brute
from ._paircount import PairCounts, linear_edges, log_edges, paircount
from . import nbody

__version__ = _core.__version__
backends = _core.backends
default_backend = _core.default_backend

# Kokkos ends with the interpreter (when no engine array outlives it).
_atexit.register(_core._finalize)

__all__ = ["KDTree", "cKDTree", "knn_brute", "paircount", "PairCounts", "log_edges",
           "linear_edges", "bh_accelerations", "nbody", "backends", "default_backend",
           "__version__"]
