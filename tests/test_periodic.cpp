// Periodic boxes and pair counts in bins, against exact oracles:
//  - kNN, radius counts and radius lists in a periodic box equal a brute
//    force over the queries' 27 images (formed in float, as the engine
//    forms them), on points crowding the faces and corners and at radii
//    close to L / 2, for every tree, strategy and backend;
//  - pair counts in bins equal a double-precision double loop with the
//    nearest image's distance: auto and cross, weighted, periodic or not;
//  - the natural estimator of a uniform periodic set is 0 within its
//    Poisson error.
#include "execution_spaces.hpp"
#include "neighbor_checks.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/pair_count.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace {

using namespace treetrav;
using test::HostPoints;

template <class Space>
class Periodic : public ::testing::Test {};
TYPED_TEST_SUITE(Periodic, test::ExecutionSpaces, test::SpaceName);

// Points in the box [0, L) of sides `sides`: a third uniform, a third within
// 2% of a face, a third within 2% of a corner (so that many queries have
// images), some repeated exactly (ties).
HostPoints box_points(Index n, std::array<double, 3> sides, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  HostPoints points = allocate_points<Kokkos::HostSpace>("test::box", n, 3);
  for (Index i = 0; i < n; ++i) {
    int const kind = i % 3;
    for (int k = 0; k < 3; ++k) {
      double u = unit(rng);
      if (kind == 2 || (kind == 1 && k == int(i % 3)))
        u = u < 0.5 ? 0.02 * u : 1 - 0.02 * (u - 0.5); // near 0 or near L
      Coordinate x = static_cast<Coordinate>(u * sides[k]);
      if (!(x < Coordinate(sides[k])))
        x = std::nextafter(Coordinate(sides[k]), Coordinate(0));
      points.coordinates(i, k) = x;
    }
    if (i % 17 == 5 && i > 0)
      for (int k = 0; k < 3; ++k)
        points.coordinates(i, k) = points.coordinates(i - 1, k);
  }
  return points;
}

// Squared distance from p to the nearest image of q, the images formed in
// float as the engine forms them.
Coordinate image_distance2(HostPoints const& reference, Index p, HostPoints const& queries, Index q,
                           PeriodicBox const& box) {
  Coordinate best = infinity;
  for (int shift = 0; shift < 27; ++shift) {
    Coordinate image[3];
    int s = shift;
    for (int k = 0; k < 3; ++k, s /= 3) {
      int const n = s % 3 - 1;
      image[k] = n == 0 ? queries.coordinates(q, k)
                        : queries.coordinates(q, k) + static_cast<Coordinate>(n) * box.length[k];
    }
    Coordinate sum = detail::square(reference.coordinates(p, 0) - image[0]);
    for (int k = 1; k < 3; ++k)
      sum = detail::add_square(sum, reference.coordinates(p, k) - image[k]);
    best = std::min(best, sum);
  }
  return best;
}

struct PeriodicCase {
  std::string name;
  HostPoints reference, queries;
  PeriodicBox box;
};

std::vector<PeriodicCase> periodic_cases() {
  std::vector<PeriodicCase> cases;
  std::array<double, 3> const cube{1, 1, 1}, slab{10, 3, 6.5};
  cases.push_back({"cube", box_points(400, cube, 1), box_points(150, cube, 2), PeriodicBox({1, 1, 1})});
  cases.push_back({"slab", box_points(300, slab, 3), box_points(120, slab, 4),
                   PeriodicBox({10, 3, 6.5})});
  return cases;
}

TYPED_TEST(Periodic, NearestNeighborsEqualImageBruteForce) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  for (auto const& c : periodic_cases())
    for (bool self : {false, true})
      for (int k : {1, 10, 40}) {
        HostPoints const& queries = self ? c.reference : c.queries;
        // The oracle: k best by (nearest image's distance2, index).
        std::vector<Index> expected;
        std::vector<Coordinate> expected_d;
        for (Index q = 0; q < queries.size(); ++q) {
          std::vector<std::pair<Coordinate, Index>> all;
          for (Index p = 0; p < c.reference.size(); ++p)
            if (!(self && p == q))
              all.emplace_back(image_distance2(c.reference, p, queries, q, c.box), p);
          std::partial_sort(all.begin(), all.begin() + k, all.end());
          for (int j = 0; j < k; ++j) {
            expected.push_back(all[j].second);
            expected_d.push_back(std::sqrt(all[j].first));
          }
        }
        auto const device_queries = copy_points(space, queries, "test::queries");
        NeighborOptions options{k, self};
        options.box = c.box;
        auto check = [&](auto const& results, std::string const& what) {
          auto const i = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.indices);
          auto const d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.distances);
          int wrong = 0;
          for (Index q = 0; q < queries.size(); ++q)
            for (int j = 0; j < k; ++j)
              wrong += i(q, j) != expected[q * k + j] || d(q, j) != expected_d[q * k + j];
          EXPECT_EQ(wrong, 0) << c.name << " k=" << k << (self ? " self " : " ") << what;
        };
        Bvh<Memory> bvh(space, c.reference, 8);
        BallTree<Memory> ball(space, c.reference, 8);
        VpTree<Memory> vp(space, c.reference, 8);
        test::for_each_strategy<TypeParam>([&](auto strategy) {
          check(find_neighbors(space, bvh, device_queries, options, strategy),
                "bvh " + test::strategy_name(strategy));
        });
        check(find_neighbors(space, ball, device_queries, options, Autoropes{}), "ball tree");
        check(find_neighbors(space, vp, device_queries, options, Autoropes{}), "vp tree");
        auto const reference = copy_points(space, c.reference, "test::reference");
        check(find_neighbors(space, reference, device_queries, options, BruteForce{}), "brute force");
      }
}

TYPED_TEST(Periodic, RadiusCountsAndListsEqualImageBruteForce) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  for (auto const& c : periodic_cases())
    for (bool self : {false, true})
      // Up to just below half the shortest side.
      for (double share : {0.05, 0.2, 0.499}) {
        HostPoints const& queries = self ? c.reference : c.queries;
        Coordinate const r = static_cast<Coordinate>(share * c.box.shortest());
        Coordinate const r2 = r * r;
        std::vector<std::int64_t> counts, offsets{0};
        std::vector<Index> indices;
        std::vector<Coordinate> distances;
        for (Index q = 0; q < queries.size(); ++q) {
          std::vector<std::pair<Coordinate, Index>> found;
          for (Index p = 0; p < c.reference.size(); ++p) {
            Coordinate const d2 = image_distance2(c.reference, p, queries, q, c.box);
            if (!(self && p == q) && d2 <= r2)
              found.emplace_back(d2, p);
          }
          std::sort(found.begin(), found.end());
          counts.push_back(static_cast<std::int64_t>(found.size()));
          for (auto const& [d2, p] : found) {
            indices.push_back(p);
            distances.push_back(std::sqrt(d2));
          }
          offsets.push_back(static_cast<std::int64_t>(indices.size()));
        }
        std::string const what = c.name + " r=" + std::to_string(r) + (self ? " self" : "");
        auto const device_queries = copy_points(space, queries, "test::queries");
        RangeCountOptions options{r, self};
        options.box = c.box;
        auto check_counts = [&](auto const& found, std::string const& how) {
          auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, found);
          EXPECT_EQ(std::vector<std::int64_t>(h.data(), h.data() + h.extent(0)), counts)
              << what << " " << how;
        };
        Bvh<Memory> tree(space, c.reference, 8);
        test::for_each_strategy<TypeParam>([&](auto strategy) {
          check_counts(count_within(space, tree, device_queries, options, strategy),
                       test::strategy_name(strategy));
          auto const lists = find_within(space, tree, device_queries, RadiusSearchOptions{options, 2},
                                         strategy);
          auto const o = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.offsets);
          auto const i = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.indices);
          auto const d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.distances);
          EXPECT_EQ(std::vector<std::int64_t>(o.data(), o.data() + o.extent(0)), offsets) << what;
          EXPECT_EQ(std::vector<Index>(i.data(), i.data() + i.extent(0)), indices) << what;
          EXPECT_EQ(std::vector<Coordinate>(d.data(), d.data() + d.extent(0)), distances) << what;
        });
        auto const reference = copy_points(space, c.reference, "test::reference");
        check_counts(count_within(space, reference, device_queries, options, BruteForce{}),
                     "brute force");
      }
}

TYPED_TEST(Periodic, BadBoxesAndRadiiAreRefused) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto const c = periodic_cases().front();
  Bvh<Memory> tree(space, c.reference, 8);
  auto queries = c.queries;
  auto const inside = copy_points(space, queries, "test::queries");
  RangeCountOptions options{0.5f, false};
  options.box = c.box;
  EXPECT_THROW(count_within(space, tree, inside, options, Autoropes{}), InputError); // r = L / 2
  options.radius = 0.1f;
  HostPoints outside = allocate_points<Kokkos::HostSpace>("test::outside", queries.size(), 3);
  Kokkos::deep_copy(outside.coordinates, queries.coordinates);
  outside.coordinates(7, 1) = 1.0f; // = L: outside [0, L)
  auto const bad = copy_points(space, outside, "test::bad");
  try {
    count_within(space, tree, bad, options, Autoropes{});
    ADD_FAILURE() << "a query outside the box was accepted";
  } catch (InputError const& e) {
    EXPECT_NE(std::string(e.what()).find("queries: row 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PeriodicBox({1, -1, 1}), InputError);
  EXPECT_THROW(PeriodicBox({1, 1, 1, 1}), InputError);
  NeighborOptions two_d{3, false};
  two_d.box = PeriodicBox({1, 1});
  EXPECT_THROW(find_neighbors(space, tree, inside, two_d, Autoropes{}), InputError);
}

// The pair counts' oracle: every pair's distance to the nearest image in
// double, binned in [e_b, e_{b+1}).
struct BinnedPairs {
  std::vector<std::uint64_t> counts;
  std::vector<double> weighted;
};

BinnedPairs brute_force_pairs(HostPoints const& reference, HostPoints const& queries,
                              std::vector<double> const& edges, PeriodicBox const& box, bool autocorr,
                              std::vector<float> const& w_ref, std::vector<float> const& w_query) {
  std::size_t const bins = edges.size() - 1;
  BinnedPairs out{std::vector<std::uint64_t>(bins, 0), std::vector<double>(bins, 0)};
  int const dimension = reference.dimension();
  for (Index q = 0; q < queries.size(); ++q)
    for (Index p = autocorr ? q + 1 : 0; p < reference.size(); ++p) {
      double d2 = 0;
      for (int k = 0; k < dimension; ++k) {
        double d = std::abs(double(queries.coordinates(q, k)) - double(reference.coordinates(p, k)));
        if (box.periodic())
          d = std::min(d, double(box.length[k]) - d);
        d2 += d * d;
      }
      for (std::size_t b = 0; b < bins; ++b)
        if (d2 >= edges[b] * edges[b] && d2 < edges[b + 1] * edges[b + 1]) {
          ++out.counts[b];
          if (!w_ref.empty())
            out.weighted[b] += double(w_query[q]) * double(w_ref[p]);
        }
    }
  return out;
}

TYPED_TEST(Periodic, PairCountsEqualDoubleLoop) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> weight(0.5f, 2.0f);
  for (auto const& c : periodic_cases())
    for (bool periodic : {true, false})
      for (bool autocorr : {true, false})
        for (bool weighted : {false, true}) {
          double const half = c.box.shortest() / 2;
          // Log bins, linear bins from 0 (the first holds the duplicates),
          // few wide bins up to L / 2 (whole nodes counted at once), and more
          // bins than the walks keep in their 32-bin state (the group walk's
          // counts then leave the warp's scratch).
          for (auto const& edges :
               {log_edges(0.01 * half, 0.9 * half, 12), linear_edges(0, 0.5 * half, 7),
                linear_edges(0.1, half, 2), log_edges(0.005 * half, 0.9 * half, 40)}) {
            HostPoints const& queries = autocorr ? c.reference : c.queries;
            std::vector<float> w_ref, w_query;
            if (weighted) {
              for (Index i = 0; i < c.reference.size(); ++i)
                w_ref.push_back(weight(rng));
              w_query = autocorr ? w_ref : std::vector<float>();
              if (!autocorr)
                for (Index i = 0; i < queries.size(); ++i)
                  w_query.push_back(weight(rng));
            }
            PairCountOptions options;
            options.edges = edges;
            options.autocorrelation = autocorr;
            if (periodic)
              options.box = c.box;
            auto const expected = brute_force_pairs(c.reference, queries, edges, options.box,
                                                    autocorr, w_ref, w_query);
            Bvh<Memory> tree(space, c.reference, 8);
            auto const device_queries = copy_points(space, queries, "test::queries");
            Kokkos::View<Coordinate*, Memory> wr("test::w_ref", w_ref.size()),
                wq("test::w_query", w_query.size());
            Kokkos::deep_copy(wr, Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                      w_ref.data(), w_ref.size()));
            Kokkos::deep_copy(wq, Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                      w_query.data(), w_query.size()));
            auto const check = [&](auto strategy, std::string const& name) {
              auto const got = count_pairs(space, tree, device_queries, options, strategy, wr, wq);
              std::string const what = c.name + (periodic ? " periodic" : " open") +
                                        (autocorr ? " auto" : " cross") +
                                        (weighted ? " weighted " : " ") + std::to_string(edges.size() - 1) +
                                        " bins " + name;
              EXPECT_EQ(got.counts, expected.counts) << what;
              ASSERT_EQ(got.weighted.size(), weighted ? expected.counts.size() : 0u) << what;
              for (std::size_t b = 0; b < got.weighted.size(); ++b)
                EXPECT_NEAR(got.weighted[b], expected.weighted[b], 1e-9 * (1 + expected.weighted[b]))
                    << what << " bin " << b;
            };
            test::for_each_strategy<TypeParam>(
                [&](auto strategy) { check(strategy, test::strategy_name(strategy)); });
            // The group walk pairs a set's own points only.
            if (autocorr) {
              check(GroupWalk{}, "group");
              GroupWalk small;
              small.group_size = 5;
              small.warp_size = 4; // host backends: fewer lanes than a group of 64
              if (!is_cuda_space_v<TypeParam>)
                check(small, "group (5 a group)");
            } else {
              EXPECT_THROW(count_pairs(space, tree, device_queries, options, GroupWalk{}, wr, wq),
                           InputError);
            }
          }
        }
}

// Pairs at exactly an edge's distance (a lattice, edges at its spacings)
// are decided as the double-precision loop decides them: the group walk's
// float distances hand such pairs to double.
TYPED_TEST(Periodic, PairCountsOnEdgesEqualDoubleLoop) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  int const side = 9;
  HostPoints lattice = allocate_points<Kokkos::HostSpace>("test::lattice", side * side * side, 3);
  Index i = 0;
  for (int x = 0; x < side; ++x)
    for (int y = 0; y < side; ++y)
      for (int z = 0; z < side; ++z, ++i) {
        lattice.coordinates(i, 0) = float(x) * 0.5f;
        lattice.coordinates(i, 1) = float(y) * 0.5f;
        lattice.coordinates(i, 2) = float(z) * 0.5f;
      }
  std::vector<double> const edges{0, 0.5, std::sqrt(0.5), 1, std::sqrt(2.0), 1.5, 2};
  for (bool periodic : {false, true}) {
    PairCountOptions options;
    options.edges = edges;
    options.autocorrelation = true;
    if (periodic)
      options.box = PeriodicBox({side * 0.5, side * 0.5, side * 0.5});
    auto const expected =
        brute_force_pairs(lattice, lattice, edges, options.box, true, {}, {});
    Bvh<Memory> tree(space, lattice, 8);
    auto const queries = copy_points(space, lattice, "test::queries");
    EXPECT_EQ(count_pairs(space, tree, queries, options, GroupWalk{}).counts, expected.counts)
        << (periodic ? "periodic" : "open");
    EXPECT_EQ(count_pairs(space, tree, queries, options, Autoropes{}).counts, expected.counts)
        << (periodic ? "periodic" : "open");
  }
}

template <class Space>
class PeriodicHost : public ::testing::Test {};
TYPED_TEST_SUITE(PeriodicHost, test::HostExecutionSpaces, test::SpaceName);

// The host's group walk for pair counts at every vector width this machine
// runs (the baseline's 4 lanes, and AVX2's 8 and AVX-512's 16 where it has
// them) counts what the double loop counts: on a lattice whose pairs sit
// exactly on the edges (each decided in double) and on uniform points with
// duplicates, weighted and not, periodic and open.
TYPED_TEST(PeriodicHost, PairCountsAtEveryVectorWidth) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  Kokkos::DefaultHostExecutionSpace host;
  int const side = 8;
  HostPoints lattice = allocate_points<Kokkos::HostSpace>("test::lattice", side * side * side, 3);
  for (Index i = 0; i < lattice.size(); ++i)
    for (int k = 0; k < 3; ++k)
      lattice.coordinates(i, k) = float((k == 0 ? i / (side * side) : k == 1 ? i / side : i) % side) * 0.5f;
  HostPoints uniform = generators::uniform(host, 3000, 3, 11);
  for (Index i = 0; i < 300; ++i) // duplicates: pairs at distance 0
    for (int k = 0; k < 3; ++k)
      uniform.coordinates(i + 300, k) = uniform.coordinates(i, k);
  struct Case {
    HostPoints points;
    std::vector<double> edges;
    PeriodicBox box;
  };
  std::vector<Case> const cases{
      {lattice, {0, 0.5, std::sqrt(0.5), 1, std::sqrt(2.0), 1.5, 2}, PeriodicBox({4, 4, 4})},
      {uniform, linear_edges(0, 0.3, 9), PeriodicBox({1, 1, 1})},
      {uniform, log_edges(0.002, 0.45, 24), PeriodicBox({1, 1, 1})},
      {uniform, log_edges(0.002, 0.45, 24), PeriodicBox{}}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> weight(0.5f, 2.0f);
  for (auto const& c : cases)
    for (bool weighted : {false, true}) {
      Index const n = c.points.size();
      std::vector<float> w;
      for (Index i = 0; weighted && i < n; ++i)
        w.push_back(weight(rng));
      PairCountOptions options;
      options.edges = c.edges;
      options.box = c.box;
      options.autocorrelation = true;
      auto const expected = brute_force_pairs(c.points, c.points, c.edges, c.box, true, w, w);
      Bvh<Memory> tree(space, c.points, 8);
      Kokkos::View<Coordinate*, Memory> weights("test::weights", w.size());
      Kokkos::deep_copy(weights, Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                     w.data(), w.size()));
      for (int isa = 0; isa <= detail::pair_host_isa(); ++isa) {
        auto work = detail::prepare_pair_count(space, tree, n, options,
                                               Kokkos::View<Coordinate const*, Memory>(weights));
        detail::count_pair_groups(space, tree, options, GroupWalk{},
                                  Kokkos::View<double const*, Memory>(work.edges2),
                                  Kokkos::View<double const*, Memory>(work.prefix), work.counts,
                                  work.sums, isa);
        work.unordered = true;
        auto const got = detail::finish_pair_count(
            space, work, n, options, Kokkos::View<Coordinate const*, Memory>(weights));
        std::string const what = std::to_string(c.edges.size() - 1) + " bins, " +
                                 (c.box.periodic() ? "periodic" : "open") +
                                 (weighted ? ", weighted" : "") + ", isa " + std::to_string(isa);
        EXPECT_EQ(got.counts, expected.counts) << what;
        ASSERT_EQ(got.weighted.size(), weighted ? expected.counts.size() : 0u) << what;
        for (std::size_t b = 0; b < got.weighted.size(); ++b)
          EXPECT_NEAR(got.weighted[b], expected.weighted[b], 1e-9 * (1 + expected.weighted[b]))
              << what << " bin " << b;
      }
    }
}

TYPED_TEST(Periodic, UniformBoxHasNoCorrelation) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  Kokkos::DefaultHostExecutionSpace host;
  Index const n = 20000;
  HostPoints points = generators::uniform(host, n, 3, 5);
  PairCountOptions options;
  options.edges = linear_edges(0.02, 0.12, 5);
  options.box = PeriodicBox({1, 1, 1});
  options.autocorrelation = true;
  Bvh<Memory> tree(space, points, 16);
  auto const got = count_pairs(space, tree, copy_points(space, points, "test::points"), options,
                               GroupWalk{});
  EXPECT_EQ(got.counts, count_pairs(space, tree, copy_points(space, points, "test::points"),
                                    options, Autoropes{})
                            .counts);
  auto const xi = natural_estimator(got, options.box);
  for (std::size_t b = 0; b < xi.size(); ++b) {
    // Poisson: the relative error of DD is 1 / sqrt(DD).
    double const sigma = 1 / std::sqrt(double(got.counts[b]));
    EXPECT_LT(std::abs(xi[b]), 4 * sigma) << "bin " << b << " xi " << xi[b] << " DD " << got.counts[b];
  }
  // Pairs at the bins' scale are a large count, not a handful.
  EXPECT_GT(got.counts.front(), 5000u);
}

} // namespace
