"""treetrav.paircount: pair counts in radial bins (the correlation
function's DD), on the engine's trees, every backend."""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _arrays, _core


@dataclass
class PairCounts:
    """What paircount counted: per bin [edges[b], edges[b + 1]) the pairs
    (counts, uint64) and with weights the sums of their weight products
    (weighted); in a periodic box the natural estimator xi = DD / RR - 1 of
    the weighted counts if any, else of the counts (RR: the pairs a uniform
    box puts in the bin). pairs / weight_pairs: all pairs the bins draw from
    and their weight products' sum."""

    edges: np.ndarray
    counts: np.ndarray
    weighted: Optional[np.ndarray]
    xi: Optional[np.ndarray]
    pairs: float
    weight_pairs: float


def _box(boxsize, m):
    sides = np.broadcast_to(np.asarray(boxsize, dtype=np.float64), (m,))
    return [float(s) for s in sides]


def log_edges(low, high, bins):
    """bins + 1 edges from low to high, equal steps in log r."""
    return np.asarray(_core.log_edges(float(low), float(high), int(bins)))


def linear_edges(low, high, bins):
    """bins + 1 edges from low to high, equal steps in r."""
    return np.asarray(_core.linear_edges(float(low), float(high), int(bins)))


def paircount(data, edges, others=None, boxsize=None, weights=None, others_weights=None,
              backend=None, strategy=None, leafsize=None, sorted=True):
    """Pair counts in the bins [edges[b], edges[b + 1]): of the pairs of
    distinct points of `data` (each pair once), or with `others` of the
    pairs (a point of others, a point of data). boxsize (a number, or one
    side per dimension): the points lie in the periodic box [0, L) and a
    pair's distance is to the nearest image (edges up to L / 2); points
    outside are refused. Weights (one per point of each set): also the sums
    of the pairs' weight products. The bin of a pair is decided in double
    precision from the float32 coordinates, so the counts are exact.
    strategy: the tree walk (default: the group walk, "group", for data's
    own pairs; "autoropes" with others). Returns PairCounts."""
    flat, _, _, framework = _arrays.points(data, "data", allow_vector=False)
    n, m = flat.shape
    edges = np.ascontiguousarray(np.asarray(edges, dtype=np.float64).ravel())
    box = [] if boxsize is None else _box(boxsize, m)
    other = None
    if others is not None:
        other, _, _, other_framework = _arrays.points(others, "others", m, allow_vector=False)
        if other_framework != framework:
            raise ValueError(f"others: a {other_framework} array, data is a {framework} array")
    if weights is None and others_weights is not None:
        raise ValueError("others_weights: given without weights for data")
    w = ow = None
    if weights is not None:
        w, _ = _arrays.vector(weights, "weights", n)
        if other is not None:
            if others_weights is None:
                raise ValueError("others_weights: the pairs' products need weights for others too")
            ow, _ = _arrays.vector(others_weights, "others_weights", other.shape[0])
    flat, other, w, ow = _arrays.engine(flat, other, w, ow)
    counts, weighted, xi, pairs, weight_pairs = _core.paircount(
        flat, other, edges.tolist(), box, w, ow, backend or "", strategy,
        0 if leafsize is None else int(leafsize), bool(sorted))
    return PairCounts(edges=edges, counts=np.asarray(counts, dtype=np.uint64),
                      weighted=None if weights is None else np.asarray(weighted),
                      xi=np.asarray(xi) if box else None, pairs=pairs, weight_pairs=weight_pairs)
