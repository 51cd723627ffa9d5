"""treetrav.bh_accelerations: Barnes-Hut gravity over the engine's octree."""

from . import _arrays, _core


def bh_accelerations(pos, masses, theta=0.5, softening=0.0, G=1.0, multipole="quadrupole",
                     opening="barnes-hut", leafsize=8, strategy=None, backend=None, alpha=0.0025):
    """Gravitational accelerations (n, 3) of n bodies at ``pos`` (n, 3) with
    ``masses`` (n,) by a Barnes-Hut walk of a Morton octree: a cell is taken
    whole when its side s < theta * d (``opening="barnes-hut"``) or when
    d > s / theta + its centre-of-mass offset (``"com-offset"``), or when
    its next expansion term G M b^p / d^(p+2) < alpha |a| (``"relative"``,
    GADGET's criterion, |a| from a first com-offset pass at theta 0.5; p = 2
    for monopoles, 3 for quadrupoles; b = s + 2 x the centre-of-mass offset),
    with monopole or quadrupole moments;
    Plummer softening; theta = 0 (relative: alpha = 0) is direct summation. ``strategy``: the walk (default "group": a warp or thread team
    per group of neighbouring bodies; or a per-body walk such as "autoropes").
    float32 in, float32 out; other dtypes give float64 (computed in float32)."""
    flat, lead, float64, framework = _arrays.points(pos, "pos", 3, allow_vector=False)
    m, m_framework = _arrays.vector(masses, "masses", flat.shape[0])
    if m_framework != framework:
        raise ValueError(f"masses: a {m_framework} array, pos is a {framework} array")
    if int(leafsize) != leafsize or leafsize < 1:
        raise ValueError(f"leafsize: {leafsize} is not a positive integer")
    a = _arrays.empty(flat, framework, (flat.shape[0], 3), "float64" if float64 else "float32")
    flat_in, m_in, a_out = _arrays.engine(flat, m, a)
    _core.bh_accelerations(flat_in, m_in, float(theta), float(softening), float(G), multipole,
                           opening, float(alpha), int(leafsize), strategy, backend or "", a_out)
    return _arrays.finish(a, framework)
