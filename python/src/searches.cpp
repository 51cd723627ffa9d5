// The searches behind treetrav.KDTree and treetrav.knn_brute: the engine's
// BVH and its compiled walks (treetrav::searches), queries in passes so that a
// long batch answers Ctrl-C between them, run on the engine thread. Results go
// straight into arrays the caller allocated (module.hpp's on_engine).
#include "module.hpp"

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/pair_count.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/trees/bvh.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <variant>

namespace treetrav::python {
namespace {

template <class MemorySpace>
struct Built {
  Bvh<MemorySpace> tree;
  PointSet<MemorySpace> points; // the data, in the engine's layout (count_neighbors' queries)
};

using AnyBuilt = std::variant<Built<Kokkos::HostSpace>
#ifdef KOKKOS_ENABLE_CUDA
                              ,
                              Built<Kokkos::CudaSpace>
#endif
                              >;

// Queries per pass: between passes a call checks for Ctrl-C. The GPU's pass
// is large (a kernel launch per pass costs the most there).
template <class Space>
Index chunk_of(Index requested) {
  if (requested > 0)
    return requested;
  return host_space_v<Space> ? Index(1) << 20 : Index(1) << 24;
}

// Runs pass(first, count) over [0, total) in passes of `chunk` queries; a
// Ctrl-C seen by the waiting caller stops it between passes.
template <class Pass>
void in_passes(Index total, Index chunk, Pass&& pass) {
  for (Index first = 0; first < total; first += chunk) {
    if (engine_cancelled())
      throw Cancelled();
    pass(first, std::min(chunk, total - first));
  }
}

// The tree walks of `Strategies` this module offers on Space: those
// treetrav::searches holds compiled (so that the module compiles none
// itself; the group walk, where the strategies have it, is compiled there
// for every backend). `fallback` when no strategy is named.
template <class Space, class Strategies, class F>
void with_strategy(std::optional<std::string> const& name, Strategies const& fallback, F&& f) {
  Strategies const strategy = name ? parse_strategy<Strategies>(*name) : fallback;
  std::visit(
      [&](auto tag) {
        using Strategy = decltype(tag);
        if constexpr (Strategy::walks_tree &&
                      (Strategy::group_walk ? detail::compiled_space_v<Space>
                                            : detail::compiled_search_v<Space, true, Strategy>))
          f(tag);
        else
          throw InputError("strategy", ": '" + std::string(Strategy::name) +
                                           "' is not a tree walk compiled for backend " +
                                           Space::name());
      },
      strategy);
}
template <class Space, class F>
void with_strategy(std::optional<std::string> const& name, F&& f) {
  with_strategy<Space>(name, ApplicationStrategy{Autoropes{}}, std::forward<F>(f));
}

// The k (largest rank + 1, at most the points there are) a search needs.
inline int k_needed(std::vector<int> const& ranks, Index n) {
  if (ranks.empty())
    throw InputError("k", ": no neighbour rank asked for");
  int largest = 0;
  for (int r : ranks) {
    if (r < 0)
      throw InputError("k", ": ranks start at 1 (got " + std::to_string(r + 1) + ")");
    largest = std::max(largest, r);
  }
  if (largest + 1 > max_neighbors)
    throw InputError("k", ": " + std::to_string(largest + 1) + " exceeds the largest k, " +
                              std::to_string(max_neighbors));
  return std::min<int>(largest + 1, n);
}

// Writes one pass's neighbours (squared distances) into the caller's arrays:
// output column c holds the neighbour of rank ranks[c] (of rank c without
// ranks); ranks beyond the found ones and neighbours at or beyond
// `upper_bound` become (infinity, n), as scipy's.
template <class Space, class Distance>
void write_neighbors(Space const& space, NeighborResults<typename Space::memory_space> const& found,
                     Index first, Kokkos::View<int const*, typename Space::memory_space> ranks,
                     double upper_bound, Index n,
                     Kokkos::View<std::int64_t**, Kokkos::LayoutRight, typename Space::memory_space> indices,
                     Kokkos::View<Distance**, Kokkos::LayoutRight, typename Space::memory_space> distances) {
  auto const in_indices = found.indices;
  auto const in_distances = found.distances;
  int const found_k = static_cast<int>(in_indices.extent(1));
  int const columns = static_cast<int>(indices.extent(1));
  bool const ranked = ranks.extent(0) > 0;
  Distance const infinity = std::numeric_limits<Distance>::infinity();
  // One thread an output element (query, column): the writes of a warp are
  // contiguous (a thread a query would stride them by the row's bytes).
  Kokkos::parallel_for(
      "treetrav::python::write_neighbors",
      Kokkos::RangePolicy<Space>(space, 0, std::int64_t(in_indices.extent(0)) * columns),
      KOKKOS_LAMBDA(std::int64_t e) {
        std::int64_t const q = e / columns;
        int const c = static_cast<int>(e % columns);
        int const rank = ranked ? ranks(c) : c;
        Distance d = infinity;
        std::int64_t index = n;
        if (rank < found_k) {
          // The engine's squared distance (exact for its float inputs), its
          // root taken at the caller's precision.
          Distance const root = math::sqrt(static_cast<Distance>(in_distances(q, rank)));
          if (static_cast<double>(root) < upper_bound) {
            d = root;
            index = in_indices(q, rank);
          }
        }
        indices(first + q, c) = index;
        distances(first + q, c) = d;
      });
}

// The caller's output arrays of a neighbour search.
template <class Distance>
struct NeighborOutputArrays {
  RawOut<Distance> distances;
  RawOut<std::int64_t> indices;
};

// Rows [first, first + count) of the caller's (rows, k) int64 indices and
// float distances as the search's outputs: the indices' low and high words
// (little-endian), so that the walk writes scipy's results itself and no
// conversion pass follows.
template <class MemorySpace>
NeighborOutputs<MemorySpace> direct_outputs(
    Kokkos::View<std::int64_t**, Kokkos::LayoutRight, MemorySpace> const& indices,
    Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace> const& distances, std::int64_t first,
    std::int64_t count) {
  static_assert(sizeof(Index) * 2 == sizeof(std::int64_t) && std::is_same_v<Coordinate, float>);
  std::size_t const k = indices.extent(1);
  using Words = Kokkos::View<Index**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Distances = Kokkos::View<Coordinate**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  auto* const words = reinterpret_cast<Index*>(indices.data() + first * k);
  Kokkos::LayoutStride const every_other(count, 2 * k, k, 2);
  return {Words(words, every_other),
          Distances(distances.data() + first * k, Kokkos::LayoutStride(count, k, k, 1)),
          Words(words + 1, every_other)};
}

inline bool little_endian() {
  std::uint16_t const one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// The searches of a query call in passes, into the caller's arrays, with
// `base`'s options (the walk order). search(points, options) gives a pass's
// NeighborResults; when
// search(points, options, outputs) also exists and the call asks for the k
// nearest as they are (ranks 1..k, float distances, no bound), the walk
// writes into the caller's arrays directly.
template <class Distance, class Space, class Search>
void neighbors_in_passes(Space const& space, Source<Space> const& queries,
                         NeighborOptions const& base, std::vector<int> const& ranks,
                         double upper_bound, Index n, Index chunk,
                         NeighborOutputArrays<Distance> const& out, Search&& search) {
  using MemorySpace = typename Space::memory_space;
  auto const indices = destination(space, out.indices);
  auto const distances = destination(space, out.distances);
  NonFinite<Space> bad(space, "x");
  bool plain = true;
  for (std::size_t c = 0; c < ranks.size(); ++c)
    plain = plain && ranks[c] == static_cast<int>(c) && static_cast<Index>(c) < n;
  Kokkos::View<int*, MemorySpace> device_ranks;
  if (!plain) {
    device_ranks = decltype(device_ranks)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::python::ranks"), ranks.size());
    Kokkos::deep_copy(space, device_ranks,
                      Kokkos::View<int const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          ranks.data(), ranks.size()));
  }
  using Points = PointSet<MemorySpace>;
  constexpr bool can_write_directly =
      std::is_same_v<Distance, Coordinate> &&
      std::is_invocable_v<Search&, Points const&, NeighborOptions const&, NeighborOutputs<MemorySpace> const&>;
  bool const direct = can_write_directly && plain && !(upper_bound < std::numeric_limits<double>::infinity()) &&
                      little_endian();
  in_passes(static_cast<Index>(queries.rows), chunk_of<Space>(chunk), [&](Index first, Index count) {
    auto const points = rows_of(space, queries, first, count, &bad);
    NeighborOptions options = base;
    options.k = k_needed(ranks, n);
    options.squared_distances = !direct;
    if constexpr (can_write_directly) {
      if (direct) {
        search(points, options, direct_outputs(indices.view, distances.view, first, count));
        return;
      }
    }
    write_neighbors<Space, Distance>(space, search(points, options), first, device_ranks,
                                     upper_bound, n, indices.view, distances.view);
  });
  indices.finish(space);
  distances.finish(space);
  space.fence();
  bad.check(space);
}

// The output arrays of a neighbour search, float32 or float64 distances.
using AnyNeighborOutputs = std::variant<NeighborOutputArrays<float>, NeighborOutputArrays<double>>;

AnyNeighborOutputs neighbor_outputs(nb::ndarray<> const& distances,
                                    nb::ndarray<std::int64_t> const& indices, std::int64_t rows,
                                    std::int64_t cols) {
  auto const index_out = raw_out<std::int64_t>(indices, rows, cols, "indices");
  if (distances.dtype() == nb::dtype<double>())
    return NeighborOutputArrays<double>{
        raw_out<double>(nb::ndarray<double>(distances), rows, cols, "distances"), index_out};
  if (distances.dtype() == nb::dtype<float>())
    return NeighborOutputArrays<float>{raw_out<float>(nb::ndarray<float>(distances), rows, cols, "distances"),
                                  index_out};
  throw InputError("distances", ": float32 or float64 outputs only");
}

// The sum of a View's values. (Device lambdas may not be defined inside the
// generic lambdas of dispatch_backend: nvcc refuses them there.)
template <class Space>
std::int64_t sum_of(Space const& space, Kokkos::View<std::int64_t*, typename Space::memory_space> values) {
  std::int64_t total = 0;
  Kokkos::parallel_reduce(
      "treetrav::python::sum_of", Kokkos::RangePolicy<Space>(space, 0, values.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & sum) { sum += values(i); }, total);
  return total;
}

// A host vector as a numpy array that owns it.
nb::object host_array(std::vector<std::int64_t>&& values) {
  auto* owner = new std::vector<std::int64_t>(std::move(values));
  nb::capsule capsule(owner, [](void* p) noexcept { delete static_cast<std::vector<std::int64_t>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(owner->data(), {owner->size()}, capsule));
}

class KDTree {
public:
  KDTree(Input data, int leaf_size, std::string const& backend, std::vector<double> const& box)
      : backend_(backend_named(backend)), n_(static_cast<Index>(data.shape(0))),
        dimension_(static_cast<int>(data.shape(1))), box_(box.empty() ? PeriodicBox() : PeriodicBox(box)) {
    if (box_.periodic() && box_.dimension != dimension_)
      throw InputError("boxsize", ": " + std::to_string(box_.dimension) + " sides for " +
                                      std::to_string(dimension_) + "-dimensional points");
    if (n_ == 0)
      throw InputError("data", ": no points (a tree needs at least one)");
    if (data.shape(0) > static_cast<std::size_t>(std::numeric_limits<Index>::max()))
      throw InputError("data", ": more points than the engine indexes (2^31 - 1)");
    Raw const r = raw(data);
    on_engine([&] {
      dispatch_backend(backend_, [&](auto space) {
        using Space = decltype(space);
        auto const s = source(space, r, "data");
        auto points = checked_rows(space, s, "data");
        if (s.engine_layout(0, s.rows)) // keep no view of the caller's memory
          points = copy_points(space, points, "treetrav::python::data");
        if (box_.periodic())
          detail::check_in_box(space, points.coordinates, box_, "data");
        Bvh<typename Space::memory_space> tree(space, points,
                                               leaf_size > 0 ? leaf_size : default_leaf_size);
        space.fence();
        built_ = std::make_shared<AnyBuilt>(
            Built<typename Space::memory_space>{std::move(tree), std::move(points)});
      });
    });
  }

  ~KDTree() {
    // The tree's memory is freed on the engine thread; after Kokkos ended
    // (the interpreter's exit) it is left to the process's end.
    auto built = std::move(built_);
    try {
      post_to_engine([built]() mutable { built.reset(); });
    } catch (...) {
      new std::shared_ptr<AnyBuilt>(std::move(built)); // leaked on purpose
    }
  }

  Index size() const { return n_; }
  int dimension() const { return dimension_; }
  std::string backend() const { return to_string(backend_); }

  void query(Input x, std::vector<int> const& ranks, double upper_bound,
             std::optional<std::string> const& strategy, bool sorted, Index chunk,
             nb::ndarray<> distances, nb::ndarray<std::int64_t> indices) {
    check_dimension(x, "x");
    k_needed(ranks, n_); // bad ranks before any work
    Raw const r = raw(x);
    auto const out = neighbor_outputs(distances, indices, r.rows, static_cast<std::int64_t>(ranks.size()));
    on_engine([&] {
      dispatch_backend(backend_, [&](auto space) {
        using Space = decltype(space);
        auto const& built = built_of<Space>();
        auto const q = source(space, r, "x");
        NeighborOptions options;
        options.order = sorted ? QueryOrder::sfc : QueryOrder::none;
        options.box = box_;
        with_strategy<Space>(strategy, [&](auto tag) {
          auto search = [&](auto const& queries, NeighborOptions const& o, auto const&... into) {
            return find_neighbors(space, built.tree, queries, o, tag, into...);
          };
          std::visit(
              [&](auto const& o) {
                neighbors_in_passes(space, q, options, ranks, upper_bound, n_, chunk, o, search);
              },
              out);
        });
      });
    });
  }

  // Per query, the data points within distance r (inclusive), into `counts`.
  void count_ball(Input x, double radius, std::optional<std::string> const& strategy, bool sorted,
                  Index chunk, nb::ndarray<std::int64_t> counts) {
    check_dimension(x, "x");
    Raw const r = raw(x);
    auto const out = raw_out<std::int64_t>(counts, r.rows, 1, "counts");
    on_engine([&] {
      dispatch_backend(backend_, [&](auto space) {
        auto const q = source(space, r, "x");
        auto const d = destination(space, out);
        NonFinite<decltype(space)> bad(space, "x");
        counts_in_passes(space, q, &bad, radius, strategy, sorted, chunk,
                         [&](Index first, auto const& found) {
                           auto const rows = Kokkos::pair<std::int64_t, std::int64_t>(
                               first, std::int64_t(first) + std::int64_t(found.extent(0)));
                           Kokkos::deep_copy(space, Kokkos::subview(d.view, rows, 0), found);
                         });
        d.finish(space);
        space.fence();
        bad.check(space);
      });
    });
  }

  // Per query, the indices of the data points within distance r (inclusive),
  // ascending, as CSR on the host: (offsets, indices).
  nb::tuple ball_lists(Input x, double radius, std::optional<std::string> const& strategy,
                       Index chunk) {
    check_dimension(x, "x");
    Raw const r = raw(x);
    std::vector<std::int64_t> offsets{0};
    std::vector<std::int64_t> indices;
    on_engine([&] {
      dispatch_backend(backend_, [&](auto space) {
        using Space = decltype(space);
        auto const& built = built_of<Space>();
        auto const q = source(space, r, "x");
        RadiusSearchOptions options;
        options.radius.radius = static_cast<Coordinate>(radius); // find_within checks it
        options.radius.box = box_;
        offsets.reserve(q.rows + 1);
        NonFinite<Space> bad(space, "x");
        with_strategy<Space>(strategy, [&](auto tag) {
          in_passes(static_cast<Index>(q.rows), chunk_of<Space>(chunk), [&](Index first, Index count) {
            auto const found =
                find_within(space, built.tree, rows_of(space, q, first, count, &bad), options, tag);
            auto const o = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, found.offsets);
            auto const i = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, found.indices);
            std::int64_t const base = static_cast<std::int64_t>(indices.size());
            indices.insert(indices.end(), i.data(), i.data() + i.extent(0));
            for (Index j = 0; j < count; ++j) {
              // The engine orders a list by distance; scipy's lists by index.
              std::sort(indices.begin() + base + o(j), indices.begin() + base + o(j + 1));
              offsets.push_back(base + o(j + 1));
            }
          });
        });
        bad.check(space, true);
      });
    });
    return nb::make_tuple(host_array(std::move(offsets)), host_array(std::move(indices)));
  }

  // Pairs (p in this tree's data, o in other's) with |p - o| <= r, per r.
  std::vector<std::int64_t> count_pairs(KDTree const& other, std::vector<double> const& radii,
                                        std::optional<std::string> const& strategy, Index chunk) {
    if (other.backend_ != backend_)
      throw InputError("other", ": a tree on backend " + other.backend() + ", this one is on " +
                                    backend());
    if (other.box_.periodic() != box_.periodic() ||
        (box_.periodic() && !std::equal(box_.length, box_.length + box_.dimension, other.box_.length)))
      throw InputError("other", ": a tree in another periodic box (boxsize) than this one's");
    if (other.dimension_ != dimension_)
      throw InputError("other", ": " + std::to_string(other.dimension_) +
                                    "-dimensional points, this tree's are " +
                                    std::to_string(dimension_) + "-dimensional");
    return on_engine([&] {
      std::vector<std::int64_t> pairs;
      dispatch_backend(backend_, [&](auto space) {
        using Space = decltype(space);
        auto const& points = other.built_of<Space>().points;
        Source<Space> q;
        q.data = points.coordinates.data();
        q.rows = points.size();
        q.cols = points.dimension();
        q.row_stride = 1;
        q.col_stride = static_cast<std::int64_t>(points.coordinates.stride(1));
        for (double r : radii) {
          std::int64_t total = 0;
          // The tree's own points, checked when it was built.
          counts_in_passes(space, q, static_cast<NonFinite<Space> const*>(nullptr), r, strategy, true, chunk,
                           [&](Index, auto const& found) { total += sum_of(space, found); });
          pairs.push_back(total);
        }
      });
      return pairs;
    });
  }

private:
  template <class Space>
  Built<typename Space::memory_space> const& built_of() const {
    return std::get<Built<typename Space::memory_space>>(*built_);
  }

  void check_dimension(Input const& x, char const* parameter) const {
    if (static_cast<int>(x.shape(1)) != dimension_)
      throw InputError(parameter, ": points of dimension " + std::to_string(x.shape(1)) +
                                      ", the tree's are " + std::to_string(dimension_) +
                                      "-dimensional");
  }

  // Runs count_within over the queries in passes, handing each pass's counts
  // to sink(first query, counts).
  template <class Space, class Sink>
  void counts_in_passes(Space const& space, Source<Space> const& q, NonFinite<Space> const* bad,
                        double r,
                        std::optional<std::string> const& strategy, bool sorted, Index chunk,
                        Sink&& sink) const {
    auto const& built = built_of<Space>();
    RangeCountOptions options;
    options.radius = static_cast<Coordinate>(r); // count_within checks it
    options.order = sorted ? QueryOrder::sfc : QueryOrder::none;
    options.box = box_;
    with_strategy<Space>(strategy, [&](auto tag) {
      in_passes(static_cast<Index>(q.rows), chunk_of<Space>(chunk), [&](Index first, Index count) {
        sink(first, count_within(space, built.tree, rows_of(space, q, first, count, bad), options, tag));
      });
    });
  }

  Backend backend_;
  Index n_;
  int dimension_;
  PeriodicBox box_;
  std::shared_ptr<AnyBuilt> built_;
};

// Brute force at any dimension (the GEMM-screened exhaustive search).
void knn_brute(Input data, Input x, std::vector<int> const& ranks, std::string const& backend,
               Index chunk, nb::ndarray<> distances, nb::ndarray<std::int64_t> indices) {
  if (data.shape(0) == 0)
    throw InputError("data", ": no points");
  if (x.shape(1) != data.shape(1))
    throw InputError("x", ": points of dimension " + std::to_string(x.shape(1)) +
                              ", the data's are " + std::to_string(data.shape(1)) + "-dimensional");
  Index const n = static_cast<Index>(data.shape(0));
  k_needed(ranks, n); // bad ranks before any work
  Raw const rd = raw(data), rx = raw(x);
  auto const out = neighbor_outputs(distances, indices, rx.rows, static_cast<std::int64_t>(ranks.size()));
  on_engine([&] {
    dispatch_backend(backend_named(backend), [&](auto space) {
      auto const d = source(space, rd, "data");
      auto const q = source(space, rx, "x");
      auto const reference = checked_rows(space, d, "data");
      auto search = [&](auto const& queries, NeighborOptions const& options) {
        return find_neighbors(space, reference, queries, options, BruteForce{});
      };
      double const unbounded = std::numeric_limits<double>::infinity();
      std::visit(
          [&](auto const& o) {
            neighbors_in_passes(space, q, NeighborOptions{}, ranks, unbounded, n, chunk, o, search);
          },
          out);
    });
  });
}

// Pair counts in the bins of `edges` (pair_count.hpp): of data's pairs, or
// of (other, data) pairs; weights optional; in a periodic box also xi.
nb::tuple paircount(Input data, std::optional<Input> other, std::vector<double> const& edges,
                    std::vector<double> const& box, std::optional<Input1> weights,
                    std::optional<Input1> other_weights, std::string const& backend,
                    std::optional<std::string> const& strategy, int leaf_size, bool sorted) {
  if (data.shape(0) == 0)
    throw InputError("data", ": no points");
  PairCountOptions options;
  options.edges = edges;
  if (!box.empty())
    options.box = PeriodicBox(box);
  options.autocorrelation = !other;
  options.order = sorted ? QueryOrder::sfc : QueryOrder::none;
  Raw const rd = raw(data);
  std::optional<Raw> const ro = other ? std::optional<Raw>(raw(*other)) : std::nullopt;
  auto vector_raw = [](std::optional<Input1> const& v) {
    return v ? std::optional<Raw>(raw(*v)) : std::nullopt;
  };
  auto const rw = vector_raw(weights), row = vector_raw(other_weights);
  PairCounts counted;
  on_engine([&] {
    dispatch_backend(backend_named(backend), [&](auto space) {
      using Space = decltype(space);
      using MemorySpace = typename Space::memory_space;
      auto const d = source(space, rd, "data");
      auto const points = checked_rows(space, d, "data");
      Bvh<MemorySpace> tree(space, points, leaf_size > 0 ? leaf_size : default_leaf_size);
      std::optional<Source<Space>> o;
      if (ro)
        o = source(space, *ro, "others");
      auto const queries = o ? checked_rows(space, *o, "others") : points;
      // The weights' sources stay alive through the count: a set in the
      // engine's layout views their memory (a host array's staged copy).
      std::optional<Source<Space>> weight_sources[2];
      auto weights_of = [&](std::optional<Raw> const& r, int which, char const* parameter) {
        Kokkos::View<Coordinate const*, MemorySpace> w;
        if (r) {
          weight_sources[which] = source(space, *r, parameter);
          w = Kokkos::View<Coordinate const*, MemorySpace>(Kokkos::subview(
              checked_rows(space, *weight_sources[which], parameter).coordinates, Kokkos::ALL, 0));
        }
        return w;
      };
      auto const wd = weights_of(rw, 0, "weights");
      auto const wo = ro ? weights_of(row, 1, "others_weights") : wd;
      // One set's own pairs: the group walk unless another strategy is named.
      with_strategy<Space>(strategy,
                           options.autocorrelation ? PairCountStrategy{GroupWalk{}}
                                                   : PairCountStrategy{Autoropes{}},
                           [&](auto tag) {
                             counted = count_pairs(space, tree, queries, options, tag, wd, wo);
                           });
    });
  });
  std::vector<double> xi;
  if (options.box.periodic())
    xi = natural_estimator(counted, options.box);
  return nb::make_tuple(counted.counts, counted.weighted, xi, counted.pairs, counted.weight_pairs);
}

} // namespace

void bind_searches(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<KDTree>(m, "KDTreeCore")
      .def(nb::init<Input, int, std::string const&, std::vector<double> const&>(), "data"_a,
           "leaf_size"_a, "backend"_a, "box"_a)
      .def_prop_ro("n", &KDTree::size)
      .def_prop_ro("m", &KDTree::dimension)
      .def_prop_ro("backend", &KDTree::backend)
      .def("query", &KDTree::query, "x"_a, "ranks"_a, "upper_bound"_a, "strategy"_a.none(),
           "sorted"_a, "chunk"_a, "distances"_a.noconvert(), "indices"_a.noconvert())
      .def("count_ball", &KDTree::count_ball, "x"_a, "r"_a, "strategy"_a.none(), "sorted"_a,
           "chunk"_a, "counts"_a.noconvert())
      .def("ball_lists", &KDTree::ball_lists, "x"_a, "r"_a, "strategy"_a.none(), "chunk"_a)
      .def("count_pairs", &KDTree::count_pairs, "other"_a, "radii"_a, "strategy"_a.none(),
           "chunk"_a);
  m.def("paircount", &paircount, "data"_a, "other"_a.none(), "edges"_a, "box"_a,
        "weights"_a.none(), "other_weights"_a.none(), "backend"_a, "strategy"_a.none(),
        "leaf_size"_a, "sorted"_a);
  m.def("log_edges", &log_edges, "low"_a, "high"_a, "bins"_a);
  m.def("linear_edges", &linear_edges, "low"_a, "high"_a, "bins"_a);
  m.def("knn_brute", &knn_brute, "data"_a, "x"_a, "ranks"_a, "backend"_a, "chunk"_a,
        "distances"_a.noconvert(), "indices"_a.noconvert());
}

} // namespace treetrav::python
