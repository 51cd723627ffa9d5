// nn and knn: the neighbour search on the kd-tree (neighbors.hpp).
#include "neighbors.hpp"

#include <treetrav/trees/kd_tree.hpp>

namespace treetrav::cli {

io::QueryResults run_knn(SearchJob const& job) {
  return run_search(job, NeighborSearch<KdTree>(job));
}

} // namespace treetrav::cli
