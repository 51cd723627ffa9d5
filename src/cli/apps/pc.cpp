// pc: point correlation, the count of reference points within the radius of
// each query, on the BVH or by brute force.
#include "../search_app.hpp"

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/trees/bvh.hpp>

namespace treetrav::cli {
namespace {

struct PointCorrelation {
  template <class MemorySpace>
  using Tree = Bvh<MemorySpace>;
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  static constexpr bool brute_force = true;
  static constexpr bool distributed = true;
  RangeCountOptions options;

  std::size_t result_bytes() const { return sizeof(std::int64_t); }

  template <class Space, class Target, class Strategy, class Queries, class Order>
  auto search(Space const& space, Target const& target, Strategy const& strategy,
              Queries const& queries, QueryOrder order, bool probe, Order const& given) const {
    RangeCountOptions const run{options.radius, options.exclude_self && !probe, order, options.box};
    return count_within(space, target, queries, run, strategy, given);
  }
  template <class Counts>
  io::QueryResults collect(Counts const& counts) const {
    io::QueryResults results;
    results.counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
    return results;
  }

#ifdef TREETRAV_ENABLE_MPI
  template <class Space, class DistributedTree, class Strategy>
  auto search_distributed(Space const& space, DistributedTree const& tree,
                          io::HostPointSet const& queries, Index, QueryOrder order,
                          Strategy const& strategy) const {
    RangeCountOptions const run{options.radius, options.exclude_self, order};
    return distributed::count_within(space, tree, queries, run, strategy);
  }
#endif
};

} // namespace

io::QueryResults run_pc(SearchJob& job) {
  return run_search(job, PointCorrelation{{job.radius, job.self, QueryOrder::none, job.box}});
}

} // namespace treetrav::cli
