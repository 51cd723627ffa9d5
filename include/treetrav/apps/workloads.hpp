#pragma once

// The six applications as repeatable kernels on generated inputs, for
// placement and co-run measurements (treetrav-studies corun, perf/bench_placement):
// inputs, tree, query order and outputs are made once; each run() is one
// traversal launched on the instance given and not waited for, so that two
// workloads can share a GPU on two streams; subset() makes shorter ones.
#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace treetrav {

template <class ExecutionSpace>
struct Workload {
  std::string app;
  Index queries = 0; // queries run() walks
  // One traversal (autoropes) of the queries under `placement`, on `instance`.
  std::function<void(ExecutionSpace const& instance, AnyPlacement const& placement)> run;
  // The last run's results on the host, flattened (to check placements agree).
  std::function<std::vector<double>()> results;
  // The same workload (tree, points, outputs shared) walking `count` of its
  // queries, evenly spread over its order: shorter kernels for co-runs.
  std::function<Workload(Index count)> subset;
};

// The applications make_workload knows: PC, NN and kNN (BVH), VP
// (vantage-point tree), BT (ball tree), BH (octree).
inline std::vector<std::string> const& workload_names() {
  static std::vector<std::string> const names{"pc", "nn", "knn", "vp", "bt", "bh"};
  return names;
}

namespace detail {

template <class View>
std::vector<double> flatten_to_host(View const& view) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  return std::vector<double>(host.data(), host.data() + host.size());
}

// Entry i * size / count of `from`, for i < count (the order stays sorted).
template <class MemorySpace>
struct EvenlySpaced {
  Kokkos::View<Index const*, MemorySpace> from;
  Kokkos::View<Index*, MemorySpace> to;
  KOKKOS_FUNCTION void operator()(Index i) const {
    to(i) = from(static_cast<Index>(std::int64_t(i) * from.extent(0) / to.extent(0)));
  }
};

// A workload whose run(instance, placement) is walk(instance, placement,
// order) over `order` (a query order), and its subsets over evenly spaced
// entries of it.
template <class ExecutionSpace, class Walk, class Results>
Workload<ExecutionSpace>
workload_over(ExecutionSpace const& space, std::string const& app,
              Kokkos::View<Index const*, typename ExecutionSpace::memory_space> order,
              Walk const& walk, Results const& results) {
  using Memory = typename ExecutionSpace::memory_space;
  Workload<ExecutionSpace> workload{app, static_cast<Index>(order.extent(0)), {}, results, {}};
  workload.run = [walk, order](ExecutionSpace const& instance, AnyPlacement const& placement) {
    walk(instance, placement, order);
  };
  workload.subset = [=](Index count) {
    if (count < 1 || count > static_cast<Index>(order.extent(0)))
      throw std::invalid_argument("Workload::subset: " + std::to_string(count) + " of " +
                                  std::to_string(order.extent(0)) + " queries");
    Kokkos::View<Index*, Memory> spaced(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::Workload::order"), count);
    Kokkos::parallel_for("treetrav::Workload::subset",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
                         EvenlySpaced<Memory>{order, spaced});
    space.fence();
    return workload_over(space, app, Kokkos::View<Index const*, Memory>(spaced), walk, results);
  };
  return workload;
}

// A search workload: queries walk in Morton order (the placements' chunks
// are then neighbourhoods of space).
template <class ExecutionSpace, class Tree>
Workload<ExecutionSpace> search_workload(ExecutionSpace const& space, std::string const& app,
                                         Index n, std::uint64_t seed, int k, Coordinate radius) {
  using Memory = typename ExecutionSpace::memory_space;
  using Order = Kokkos::View<Index const*, Memory>;
  Kokkos::DefaultHostExecutionSpace host;
  auto const tree =
      std::make_shared<Tree>(space, generators::from_preset(host, "covtype7", n, seed), 8);
  auto const queries = std::make_shared<PointSet<Memory>>(
      copy_points(space, generators::from_preset(host, "covtype7", n, seed + 1),
                  "treetrav::Workload::queries"));
  Order const order = morton_order(space, *queries);
  // The placements' plans, kept for the workload's repeats; its own, so that
  // a co-run's two workloads never share one.
  auto const workspace = std::make_shared<::treetrav::Workspace>();
  if (k == 0) { // point correlation
    Kokkos::View<std::int64_t*, Memory> counts("treetrav::Workload::counts", n);
    auto walk = [=](ExecutionSpace const& instance, AnyPlacement const& placement,
                    Order const& walked) {
      with_placement_on<ExecutionSpace>(placement, [&](auto const& p) {
        dispatch_width(tree->width(), [&](auto width) {
          RadiusVisitor<Tree, decltype(width)::value, CountOnly> visitor{
              *tree, queries->coordinates, radius * radius, false, CountOnly{}, counts};
          traverse(instance, tree->topology, visitor, placed(Autoropes{workspace.get()}, p),
                   walked);
        });
      });
    };
    return workload_over(space, app, order, walk, [counts] { return flatten_to_host(counts); });
  }
  Kokkos::View<Index**, Kokkos::LayoutRight, Memory> indices("treetrav::Workload::indices", n, k);
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, Memory> distances("treetrav::Workload::distances",
                                                                    n, k);
  auto walk = [=](ExecutionSpace const& instance, AnyPlacement const& placement,
                  Order const& walked) {
    with_placement_on<ExecutionSpace>(placement, [&](auto const& p) {
      dispatch_k<Autoropes>(k, [&](auto k_max) {
        dispatch_width(tree->width(), [&](auto width) {
          NeighborSearchVisitor<Tree, decltype(k_max)::value, decltype(width)::value> visitor{
              *tree, queries->coordinates, k, false, indices, distances};
          traverse(instance, tree->topology, visitor, placed(Autoropes{workspace.get()}, p),
                   walked);
        });
      });
    });
  };
  return workload_over(space, app, order, walk, [indices] { return flatten_to_host(indices); });
}

} // namespace detail

// `app` (one of workload_names()) on n generated points: clustered 7-D
// points (the covtype7 preset) for the searches, a Plummer sphere for BH.
template <class ExecutionSpace>
Workload<ExecutionSpace> make_workload(ExecutionSpace const& space, std::string const& app, Index n,
                                       std::uint64_t seed = 1) {
  using Memory = typename ExecutionSpace::memory_space;
  using Order = Kokkos::View<Index const*, Memory>;
  if (app == "pc")
    return detail::search_workload<ExecutionSpace, Bvh<Memory>>(space, app, n, seed, 0, 0.05f);
  if (app == "nn")
    return detail::search_workload<ExecutionSpace, Bvh<Memory>>(space, app, n, seed, 1, 0);
  if (app == "knn")
    return detail::search_workload<ExecutionSpace, Bvh<Memory>>(space, app, n, seed, 8, 0);
  if (app == "vp")
    return detail::search_workload<ExecutionSpace, VpTree<Memory>>(space, app, n, seed, 1, 0);
  if (app == "bt")
    return detail::search_workload<ExecutionSpace, BallTree<Memory>>(space, app, n, seed, 8, 0);
  if (app != "bh")
    throw InputError("unknown application '" + app + "' (known: pc, nn, knn, vp, bt, bh)");
  auto const snapshot = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, n, seed);
  auto positions = allocate_points<Kokkos::HostSpace>("treetrav::Workload::plummer", n, 3);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> host_masses("treetrav::Workload::masses", n);
  for (Index i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d)
      positions.coordinates(i, d) = static_cast<Coordinate>(snapshot.coordinates(i, d));
    host_masses(i) = static_cast<Coordinate>(snapshot.masses(i));
  }
  auto const bodies = std::make_shared<PointSet<Memory>>(
      copy_points(space, positions, "treetrav::Workload::bodies"));
  auto const masses = Kokkos::create_mirror_view_and_copy(space, host_masses);
  auto const tree = std::make_shared<Octree<Memory>>(space, *bodies, masses, 8);
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> accelerations(
      "treetrav::Workload::accelerations", n, 3);
  auto const workspace = std::make_shared<::treetrav::Workspace>();
  auto walk = [=](ExecutionSpace const& instance, AnyPlacement const& placement,
                  Order const& walked) {
    with_placement_on<ExecutionSpace>(placement, [&](auto const& p) {
      compute_barnes_hut_accelerations(instance, *tree, *bodies, {0.5f, 0.01f, 1.0f},
                                       placed(Autoropes{workspace.get()}, p), accelerations,
                                       walked);
    });
  };
  // Bodies walk in the octree's leaf order.
  return detail::workload_over(space, app, Order(tree->points.original_index), walk,
                               [accelerations] { return detail::flatten_to_host(accelerations); });
}

} // namespace treetrav
