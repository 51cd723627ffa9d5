// bt: k nearest neighbours on the ball tree (neighbors.hpp).
#include "neighbors.hpp"

#include <treetrav/trees/ball_tree.hpp>

namespace treetrav::cli {

io::QueryResults run_bt(SearchJob& job) {
  return run_search(job, NeighborSearch<BallTree>(job));
}

} // namespace treetrav::cli
