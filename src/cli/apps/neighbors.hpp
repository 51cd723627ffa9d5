#pragma once

// nn, knn, vp, bt: the k nearest reference points of each query, through the
// tree Tree (BVH, vantage-point tree, ball tree) or by brute force. One
// adapter; knn.cpp, vp.cpp and bt.cpp each compile it for their tree.
#include "../search_app.hpp"

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>

namespace treetrav::cli {

template <template <class> class TreeOf>
struct NeighborSearch {
  template <class MemorySpace>
  using Tree = TreeOf<MemorySpace>;
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  static constexpr bool brute_force = true;
  static constexpr bool distributed = true;
  NeighborOptions options;

  explicit NeighborSearch(SearchJob const& job) : options{job.k, job.self} { options.box = job.box; }

  std::size_t result_bytes() const { return options.k * (sizeof(Index) + sizeof(Coordinate)); }

  // `target`: the tree, or the reference points for strategies that walk none.
  template <class Space, class Target, class Strategy, class Queries, class Order>
  auto search(Space const& space, Target const& target, Strategy const& strategy,
              Queries const& queries, QueryOrder order, bool probe, Order const& given) const {
    NeighborOptions run = options;
    run.exclude_self = options.exclude_self && !probe;
    run.order = order;
    return find_neighbors(space, target, queries, run, strategy, given);
  }
  template <class Neighbors>
  io::QueryResults collect(Neighbors const& neighbors) const {
    return neighbor_rows(neighbors);
  }

#ifdef TREETRAV_ENABLE_MPI
  template <class Space, class DistributedTree, class Strategy>
  auto search_distributed(Space const& space, DistributedTree const& tree,
                          io::HostPointSet const& queries, Index first, QueryOrder order,
                          Strategy const& strategy) const {
    NeighborOptions run = options;
    run.order = order;
    return distributed::find_neighbors(space, tree, queries, run, strategy, first);
  }
#endif
};

} // namespace treetrav::cli
