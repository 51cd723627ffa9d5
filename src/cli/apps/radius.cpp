// radius: the reference points within the radius of each query, as lists
// nearest first, on the BVH (tree strategies only: brute force lists no
// neighbours yet), on one rank or several.
#include "../search_app.hpp"

#include <treetrav/apps/radius_search.hpp>
#include <treetrav/trees/bvh.hpp>

namespace treetrav::cli {
namespace {

struct RadiusSearch {
  template <class MemorySpace>
  using Tree = Bvh<MemorySpace>;
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  static constexpr bool brute_force = false;
  static constexpr bool distributed = true;
  // Device bytes per query for its list, at this many neighbours (a guess:
  // lists longer than the first walk's capacity are walked again).
  static constexpr std::size_t listed_per_query = 64;
  RangeCountOptions options;

  std::size_t result_bytes() const {
    return sizeof(std::int64_t) + 2 * listed_per_query * (sizeof(Index) + sizeof(Coordinate));
  }
  template <class Space, class Target, class Strategy, class Queries, class Order>
  auto search(Space const& space, Target const& tree, Strategy const& strategy,
              Queries const& queries, QueryOrder order, bool, Order const&) const {
    RadiusSearchOptions search{options};
    search.radius.order = order;
    return find_within(space, tree, queries, search, strategy);
  }
#ifdef TREETRAV_ENABLE_MPI
  template <class Space, class DistributedTree, class Strategy>
  auto search_distributed(Space const& space, DistributedTree const& tree,
                          io::HostPointSet const& queries, Index first, QueryOrder order,
                          Strategy const& strategy) const {
    RadiusSearchOptions search{options};
    search.radius.order = order;
    return distributed::find_within(space, tree, queries, search, strategy, first);
  }
#endif
  template <class Lists>
  io::QueryResults collect(Lists const& lists) const {
    io::QueryResults results;
    results.list_offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.offsets);
    results.list_indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.indices);
    results.list_distances =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.distances);
    return results;
  }
};

} // namespace

io::QueryResults run_radius(SearchJob& job) {
  return run_search(job, RadiusSearch{{job.radius, job.self, QueryOrder::none, job.box}});
}

} // namespace treetrav::cli
