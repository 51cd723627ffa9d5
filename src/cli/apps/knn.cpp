// nn and knn: the neighbour search on the BVH (neighbors.hpp).
#include "neighbors.hpp"

#include <treetrav/trees/bvh.hpp>

namespace treetrav::cli {

io::QueryResults run_knn(SearchJob& job) {
  return run_search(job, NeighborSearch<Bvh>(job));
}

} // namespace treetrav::cli
