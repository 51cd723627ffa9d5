"""treetrav.KDTree: scipy.spatial.cKDTree's interface over treetrav's BVH."""

import numbers

import numpy as np

from . import _arrays, _core


def _ranks(k):
    """scipy's k: an int (the k nearest) or a sequence of ranks (1-based)."""
    if isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, bool):
        if k < 1:
            raise ValueError(f"k: {k} is not a positive number of neighbours")
        return list(range(int(k))), True
    try:
        ranks = [int(r) for r in k]
    except TypeError:
        raise ValueError(f"k: {k!r} is neither an int nor a sequence of ints") from None
    if not ranks or min(ranks) < 1:
        raise ValueError(f"k: ranks {ranks} must be >= 1")
    return [r - 1 for r in ranks], False


def _check_p(p, eps):
    if p != 2:
        raise ValueError(f"p: only Euclidean distances (p=2) are supported, got {p}")
    if eps != 0:
        raise ValueError(f"eps: approximate searches are not supported (eps={eps}); use eps=0")


def _radius(r):
    r = float(r)
    if not (r > 0 and np.isfinite(r)):
        raise ValueError(f"r: {r} is not a positive finite radius")
    return r


class KDTree:
    """A tree over n points in m dimensions for repeated searches, with
    scipy.spatial.cKDTree's methods and results (shapes, dtypes, the index n
    and distance inf for missing neighbours), ties broken by index.

    The engine computes in float32: float64 data is rounded to float32 first,
    and float64 distances are float32 distances widened. ``backend`` is one of
    :func:`treetrav.backends` (default: the build's fastest, the GPU on a CUDA
    build). GPU arrays (CuPy, PyTorch, JAX) are read where they lie and
    results come back on the GPU in the same framework.

    ``strategy`` names a tree walk (autoropes, recursive, lockstep, fsm, ...;
    default autoropes), ``sorted`` walks the queries in Morton order (results
    stay in the caller's order), ``chunk`` is the number of queries per pass
    (0: automatic); Ctrl-C interrupts a call between passes.

    ``boxsize`` (scipy's): a number or one side per dimension; the data and
    every query lie in the periodic box [0, L) (points outside are refused,
    not wrapped) and distances are to the nearest image; radii below L / 2.
    """

    def __init__(self, data, leafsize=None, backend=None, *, boxsize=None, strategy=None,
                 sorted=True, chunk=0):
        flat, lead, float64, framework = _arrays.points(data, "data", allow_vector=False)
        if len(lead) != 1:
            raise ValueError(f"data: expected a 2-D array (n, m), got shape {tuple(lead) + flat.shape[1:]}")
        if leafsize is not None and (int(leafsize) != leafsize or leafsize < 1):
            raise ValueError(f"leafsize: {leafsize} is not a positive integer")
        box = [] if boxsize is None else [
            float(v) for v in np.broadcast_to(np.asarray(boxsize, dtype=np.float64), (flat.shape[1],))]
        self._core = _core.KDTreeCore(*_arrays.engine(flat), 0 if leafsize is None else int(leafsize),
                                      backend or "", box)
        self.boxsize = None if boxsize is None else np.asarray(box)
        self.data = data
        self.n, self.m = self._core.n, self._core.m
        self.backend = self._core.backend
        self.strategy, self.sorted, self.chunk = strategy, bool(sorted), int(chunk)

    def __repr__(self):
        return f"treetrav.KDTree(n={self.n}, m={self.m}, backend={self.backend!r})"

    def query(self, x, k=1, eps=0, p=2, distance_upper_bound=np.inf, workers=1):
        """The k nearest data points of each point of x (shape (..., m)):
        (distances, indices), shaped (..., k) (k an int > 1 or a list), (...)
        for k=1, scalars for one point and k=1."""
        _check_p(p, eps)
        ranks, plain = _ranks(k)
        flat, lead, float64, framework = _arrays.points(x, "x", self.m)
        bound = float(distance_upper_bound)
        if np.isnan(bound):
            raise ValueError("distance_upper_bound: NaN")
        rows = flat.shape[0]
        d = _arrays.empty(flat, framework, (rows, len(ranks)), np.float64 if float64 else np.float32)
        i = _arrays.empty(flat, framework, (rows, len(ranks)), np.int64)
        flat_in, d_out, i_out = _arrays.engine(flat, d, i)
        self._core.query(flat_in, ranks, bound, self.strategy, self.sorted, self.chunk, d_out, i_out)
        d, i = _arrays.finish(d, framework), _arrays.finish(i, framework)
        if plain and len(ranks) == 1:  # scipy drops the k axis for k=1
            d, i = d.reshape(lead), i.reshape(lead)
            if lead == () and framework == "numpy":
                return d[()], i[()]
            return d, i
        return d.reshape(tuple(lead) + (len(ranks),)), i.reshape(tuple(lead) + (len(ranks),))

    def query_ball_point(self, x, r, p=2.0, eps=0, workers=1, return_sorted=None,
                         return_length=False):
        """The data points within distance r (inclusive) of each point of x:
        lists of indices, ascending (an object array of lists for several
        points, a list for one), or their lengths with return_length."""
        _check_p(p, eps)
        if np.ndim(r) != 0:
            raise ValueError("r: one radius for all points (per-point radii are not supported)")
        r = _radius(r)
        flat, lead, _, framework = _arrays.points(x, "x", self.m)
        if return_length:
            counts = _arrays.empty(flat, framework, (flat.shape[0],), np.int64)
            flat_in, counts_out = _arrays.engine(flat, counts)
            self._core.count_ball(flat_in, r, self.strategy, self.sorted, self.chunk, counts_out)
            counts = _arrays.finish(counts, framework).reshape(lead)
            return counts[()] if lead == () and framework == "numpy" else counts
        offsets, indices = self._core.ball_lists(*_arrays.engine(flat), r, self.strategy, self.chunk)
        lists = [indices[offsets[q]:offsets[q + 1]].tolist() for q in range(len(offsets) - 1)]
        if lead == ():
            return lists[0]
        out = np.empty(len(lists), dtype=object)
        out[:] = lists
        return out.reshape(lead)

    def count_neighbors(self, other, r, p=2.0, weights=None, cumulative=True):
        """The pairs (a point of this tree, a point of other) within distance r
        (inclusive): an int for one r, an array for several (non-cumulative:
        the pairs in (r[i-1], r[i]])."""
        _check_p(p, 0)
        if weights is not None:
            raise ValueError("weights: weighted pair counts are not supported")
        if not isinstance(other, KDTree):
            raise ValueError("other: expected a treetrav.KDTree")
        radii = np.asarray(r, dtype=np.float64)
        flat_r = [_radius(v) for v in radii.reshape(-1)]
        counts = np.asarray(self._core.count_pairs(other._core, flat_r, self.strategy, self.chunk),
                            dtype=np.int64).reshape(radii.shape)
        if not cumulative:
            if radii.ndim != 1 or np.any(np.diff(radii) < 0):
                raise ValueError("r: non-cumulative counts need ascending radii in a 1-D array")
            counts = np.diff(counts, prepend=0)
        return int(counts) if radii.ndim == 0 else counts


cKDTree = KDTree


def knn_brute(data, x, k=1, backend=None, chunk=0):
    """The k nearest points of data to each point of x by exhaustive search,
    at any dimension (tiles of distances from a GEMM through Kokkos Kernels,
    then exact ranking): (distances, indices) as KDTree.query gives them."""
    ranks, plain = _ranks(k)
    ref, ref_lead, _, ref_framework = _arrays.points(data, "data", allow_vector=False)
    flat, lead, float64, framework = _arrays.points(x, "x", ref.shape[1])
    if ref_framework != framework:
        raise ValueError(f"x: a {framework} array, data is a {ref_framework} array")
    d = _arrays.empty(flat, framework, (flat.shape[0], len(ranks)), np.float64 if float64 else np.float32)
    i = _arrays.empty(flat, framework, (flat.shape[0], len(ranks)), np.int64)
    ref_in, flat_in, d_out, i_out = _arrays.engine(ref, flat, d, i)
    _core.knn_brute(ref_in, flat_in, ranks, backend or "", int(chunk), d_out, i_out)
    d, i = _arrays.finish(d, framework), _arrays.finish(i, framework)
    if plain and len(ranks) == 1:
        return d.reshape(lead), i.reshape(lead)
    return d.reshape(tuple(lead) + (len(ranks),)), i.reshape(tuple(lead) + (len(ranks),))
