// vp: the nearest neighbour on the vantage-point tree (neighbors.hpp).
#include "neighbors.hpp"

#include <treetrav/trees/vp_tree.hpp>

namespace treetrav::cli {

io::QueryResults run_vp(SearchJob& job) {
  return run_search(job, NeighborSearch<VpTree>(job));
}

} // namespace treetrav::cli
