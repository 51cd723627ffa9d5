#include <treetrav/core/error.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/schedule/detail/sm_centric_launch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

namespace treetrav {

AnyPlacement parse_placement(std::string const& name) {
  if (name == Hardware::name)
    return Hardware{};
  if (name == SmCentric::name)
    return SmCentric{};
  if (name == Affinity::name)
    return Affinity{};
  if (name == Persistent::name)
    return Persistent{};
  throw InputError("placement", ": unknown placement '" + name +
                   "' (known: hardware, smcentric, affinity, persistent)");
}

std::string placement_name(AnyPlacement const& placement) {
  return std::visit([](auto const& p) { return std::string(std::decay_t<decltype(p)>::name); },
                    placement);
}

PlacementOptions& placement_options(AnyPlacement& placement) {
  return std::visit(
      [](auto& p) -> PlacementOptions& {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, Hardware>)
          throw std::logic_error("the hardware placement has no options");
        else
          return p.options;
      },
      placement);
}

namespace {

using Sets = Kokkos::View<std::uint32_t const**, Kokkos::LayoutRight, Kokkos::HostSpace>;

struct Scorer {
  Sets sets;
  std::vector<int> sizes; // bits per row

  explicit Scorer(Sets s) : sets(s), sizes(s.extent(0)) {
    for (std::size_t i = 0; i < s.extent(0); ++i)
      for (std::size_t w = 0; w < s.extent(1); ++w)
        sizes[i] += __builtin_popcount(s(i, w));
  }
  double operator()(Index a, Index b) const {
    int common = 0;
    for (std::size_t w = 0; w < sets.extent(1); ++w)
      common += __builtin_popcount(sets(a, w) & sets(b, w));
    int const either = sizes[a] + sizes[b] - common;
    return either == 0 ? 1.0 : double(common) / either;
  }
};

} // namespace

double jaccard(Sets sets, Index a, Index b) {
  return Scorer(sets)(a, b);
}

std::vector<int> affinity_clusters(Sets sets, int clusters, double threshold, std::uint64_t seed) {
  if (clusters < 1)
    throw std::invalid_argument("affinity_clusters: clusters must be >= 1");
  Index const n = static_cast<Index>(sets.extent(0));
  std::vector<int> cluster(n, -1);
  if (n == 0)
    return cluster;
  Scorer const score(sets);
  using Host = Kokkos::DefaultHostExecutionSpace;

  // 1. Affinity graphs: breadth-first from each chunk not yet reached, the
  // edges found on the fly (each pair scored at most once; a dense graph
  // takes one pass).
  std::vector<int> graph(n, -1);
  std::vector<Index> unreached(n);
  std::iota(unreached.begin(), unreached.end(), 0);
  std::vector<std::vector<Index>> members;
  std::size_t head = 0;
  while (head < unreached.size()) {
    int const g = static_cast<int>(members.size());
    members.emplace_back();
    std::vector<Index> queue{unreached[head++]};
    graph[queue.front()] = g;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      Index const v = queue[q];
      members[g].push_back(v);
      std::size_t const left = unreached.size() - head;
      // Keep the unreached in order behind `head`; the linked join the queue.
      std::size_t keep = head;
      for (std::size_t i = 0; i < left; ++i) {
        Index const u = unreached[head + i];
        if (score(v, u) >= threshold) {
          graph[u] = g;
          queue.push_back(u);
        } else {
          unreached[keep++] = u;
        }
      }
      unreached.resize(keep);
    }
  }

  // 2. Seeds: one random chunk per graph (a random choice of graphs when
  // there are more), then chunks far from every seed.
  std::mt19937_64 random(seed);
  int const wanted = std::min<Index>(clusters, n);
  std::vector<int> graphs(members.size());
  std::iota(graphs.begin(), graphs.end(), 0);
  std::shuffle(graphs.begin(), graphs.end(), random);
  std::vector<Index> seeds;
  std::vector<char> is_seed(n, 0);
  for (int g : graphs) {
    if (static_cast<int>(seeds.size()) == wanted)
      break;
    Index const s =
        members[g][std::uniform_int_distribution<std::size_t>(0, members[g].size() - 1)(random)];
    seeds.push_back(s);
    is_seed[s] = 1;
  }
  std::vector<Index> candidates(n);
  std::iota(candidates.begin(), candidates.end(), 0);
  std::shuffle(candidates.begin(), candidates.end(), random);
  for (double limit = 0; static_cast<int>(seeds.size()) < wanted; limit += 0.1)
    for (Index v : candidates) {
      if (static_cast<int>(seeds.size()) == wanted)
        break;
      if (is_seed[v])
        continue;
      bool far = true;
      for (Index s : seeds)
        if (!(far = score(v, s) <= limit + 1e-12))
          break;
      if (far) {
        seeds.push_back(v);
        is_seed[v] = 1;
      }
    }

  // 3. Each chunk's nearest chunks in its graph, most similar first (ties by
  // chunk), at most `nearest` of them: growth looks no further.
  constexpr std::size_t nearest = 32;
  std::vector<std::vector<Index>> lists(n);
  Kokkos::parallel_for("treetrav::affinity::lists",
                       Kokkos::RangePolicy<Host, Kokkos::Schedule<Kokkos::Dynamic>>(0, n),
                       [&](Index v) {
                         std::vector<std::pair<double, Index>> scored;
                         for (Index u : members[graph[v]])
                           if (u != v)
                             if (double const j = score(v, u); j >= threshold)
                               scored.emplace_back(-j, u);
                         std::size_t const keep = std::min(nearest, scored.size());
                         std::partial_sort(scored.begin(), scored.begin() + keep, scored.end());
                         for (std::size_t i = 0; i < keep; ++i)
                           lists[v].push_back(scored[i].second);
                       });

  // 4. Equal sizes (the first n % clusters one larger), grown round-robin:
  // a cluster picks a random member and takes the remaining chunk most
  // similar to it.
  std::vector<Index> capacity(clusters, n / clusters);
  for (int c = 0; c < n % clusters; ++c)
    ++capacity[c];
  std::vector<std::vector<Index>> grown(seeds.size());
  for (std::size_t c = 0; c < seeds.size(); ++c)
    cluster[seeds[c]] = static_cast<int>(c), grown[c] = {seeds[c]};
  std::vector<std::size_t> next(n, 0); // the first entry of each list not yet looked at
  std::vector<char> stuck(seeds.size(), 0);
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t c = 0; c < seeds.size(); ++c) {
      auto& members_c = grown[c];
      if (stuck[c] || static_cast<Index>(members_c.size()) == capacity[c])
        continue;
      // A random member with a chunk left on its list; the members in turn
      // from there, so that a cluster is stuck only when all are exhausted.
      std::size_t const from =
          std::uniform_int_distribution<std::size_t>(0, members_c.size() - 1)(random);
      Index taken = -1;
      for (std::size_t t = 0; t < members_c.size() && taken < 0; ++t) {
        Index const v = members_c[(from + t) % members_c.size()];
        auto const& list = lists[v];
        while (next[v] < list.size() && cluster[list[next[v]]] >= 0)
          ++next[v];
        if (next[v] < list.size())
          taken = list[next[v]];
      }
      if (taken < 0) {
        stuck[c] = 1;
        continue;
      }
      cluster[taken] = static_cast<int>(c);
      members_c.push_back(taken);
      grew = true;
    }
  }
  // Chunks no cluster reached fill the clusters with room, in chunk order.
  std::vector<Index> size(clusters, 0);
  for (std::size_t c = 0; c < seeds.size(); ++c)
    size[c] = static_cast<Index>(grown[c].size());
  int room = 0;
  for (Index v = 0; v < n; ++v) {
    if (cluster[v] >= 0)
      continue;
    while (size[room] == capacity[room])
      ++room;
    cluster[v] = room;
    ++size[room];
  }
  return cluster;
}

int hill_climb_workers(int start, std::function<double(int)> const& time,
                       std::vector<std::pair<int, double>>* trace) {
  int best = std::max(start, 1);
  double best_time = time(best);
  if (trace)
    trace->emplace_back(best, best_time);
  for (int n = best - 1; n >= 1; --n) {
    double const t = time(n);
    if (trace)
      trace->emplace_back(n, t);
    if (t >= best_time)
      break;
    best = n;
    best_time = t;
  }
  return best;
}

} // namespace treetrav

#if defined(KOKKOS_ENABLE_CUDA)
namespace treetrav::detail {

namespace {
struct MarkSm {
  Kokkos::View<int*, Kokkos::CudaSpace> seen;
  KOKKOS_FUNCTION void operator()(Index) const {
    int const id = hardware_sm_id();
    if (id < static_cast<int>(seen.extent(0)))
      seen(id) = 1;
  }
};
} // namespace

CudaSmTable const& cuda_sm_table(Kokkos::Cuda const& space, ::treetrav::Workspace& workspace) {
  auto& table = workspace.get<CudaSmTable>();
  if (table.ready)
    return table;
  check_cuda(cudaGetDeviceProperties(&table.properties, space.cuda_device()),
             "cudaGetDeviceProperties");
  constexpr int id_limit = 1024;
  Kokkos::View<int*, Kokkos::CudaSpace> seen("treetrav::CudaSmTable::seen", id_limit);
  Index const threads =
      2 * table.properties.multiProcessorCount * table.properties.maxThreadsPerMultiProcessor;
  Kokkos::parallel_for("treetrav::sm_centric::probe",
                       Kokkos::RangePolicy<Kokkos::Cuda>(space, 0, threads), MarkSm{seen});
  auto host_seen = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, seen);
  Kokkos::View<int*, Kokkos::HostSpace> dense("treetrav::CudaSmTable::sm_of_id", id_limit);
  table.sms = 0;
  for (int id = 0; id < id_limit; ++id)
    dense(id) = host_seen(id) ? table.sms++ : -1;
  table.sm_of_id = Kokkos::create_mirror_view_and_copy(space, dense);
  table.ready = true;
  return table;
}

} // namespace treetrav::detail
#endif
