#pragma once

// Searches in a periodic box by the images of the queries: a point's distance
// to a query is its distance to the nearest of the query's periodic images
// q + (n_k L_k) (n_k in {-1, 0, 1}; each image formed in float, as the
// oracles form it). The query itself is searched as in open space; an image
// is searched only where it comes within the search's reach of the box
// [0, L] (every point lies there), which for most queries is none. The
// images' answers are then merged into their query's: counts added, lists
// merged, k nearest merged keeping each point once at its nearest image.
// Every tree, strategy and backend searches the images unchanged.
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/distance.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/core/periodic_box.hpp>
#include <treetrav/core/point_set.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace treetrav::detail {

// The images of a query set that a search must walk besides the queries.
template <class MemorySpace>
struct QueryImages {
  PointSet<MemorySpace> points;                 // one row per image
  Kokkos::View<Index*, MemorySpace> offsets;    // query q's images: [offsets(q), offsets(q + 1))
  Index count = 0;
};

// Image `shift` (base-3 digits: n_k + 1) of query row x, and whether it comes
// within reach2 (squared) of the box [0, L]: the box distance summed as the
// trees' bounds sum it (never above the distance to a point in the box).
struct ImageOf {
  PeriodicBox box;
  KOKKOS_FUNCTION int shifts() const {
    int s = 1;
    for (int k = 0; k < box.dimension; ++k)
      s *= 3;
    return s;
  }
  template <class Row>
  KOKKOS_FUNCTION bool needed(Row const& x, int shift, Coordinate reach2,
                              Coordinate (&image)[PeriodicBox::max_dimension]) const {
    Coordinate sum = 0;
    bool moved = false;
    for (int k = 0; k < box.dimension; ++k, shift /= 3) {
      int const n = shift % 3 - 1;
      moved = moved || n != 0;
      image[k] = n == 0 ? x(k) : x(k) + static_cast<Coordinate>(n) * box.length[k];
      Coordinate const below = -image[k], above = image[k] - box.length[k];
      Coordinate const gap = below > above ? (below > 0 ? below : 0) : (above > 0 ? above : 0);
      sum = add_square(sum, gap);
    }
    return moved && !(sum > reach2);
  }
};

// How far a query's search reaches (squared): the same for every query (a
// radius), or the k-th nearest distance its own search found.
struct SameReach {
  Coordinate reach2;
  KOKKOS_FUNCTION Coordinate operator()(Index) const { return reach2; }
};
template <class Distances>
struct KthReach {
  Distances distances2; // (queries, k), squared, nearest first
  KOKKOS_FUNCTION Coordinate operator()(Index q) const {
    return distances2(q, static_cast<int>(distances2.extent(1)) - 1);
  }
};

// The images of `queries` within reach2(q) (squared) of the box.
template <class ExecutionSpace, class MemorySpace, class Reach2>
QueryImages<MemorySpace> query_images(ExecutionSpace const& space,
                                      PointSet<MemorySpace> const& queries, PeriodicBox const& box,
                                      Reach2 const& reach2) {
  QueryImages<MemorySpace> images;
  Index const n = queries.size();
  images.offsets = Kokkos::View<Index*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::QueryImages::offsets"), n + 1);
  auto const x = queries.coordinates;
  auto const offsets = images.offsets;
  ImageOf const of{box};
  Index total = 0;
  Kokkos::parallel_scan(
      "treetrav::QueryImages::count", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index q, Index & sum, bool final) {
        if (final)
          offsets(q) = sum;
        Coordinate image[PeriodicBox::max_dimension];
        auto const row = [&](int k) { return x(q, k); };
        Coordinate const r2 = reach2(q);
        for (int s = 0; s < of.shifts(); ++s)
          sum += of.needed(row, s, r2, image) ? 1 : 0;
        if (final && q + 1 == n)
          offsets(n) = sum;
      },
      total);
  if (n == 0)
    Kokkos::deep_copy(space, images.offsets, Index(0));
  images.count = total;
  images.points = allocate_points<MemorySpace>("treetrav::QueryImages", total, queries.dimension());
  auto const points = images.points.coordinates;
  Kokkos::parallel_for(
      "treetrav::QueryImages::fill", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index q) {
        Coordinate image[PeriodicBox::max_dimension];
        auto const row = [&](int k) { return x(q, k); };
        Coordinate const r2 = reach2(q);
        Index at = offsets(q);
        for (int s = 0; s < of.shifts(); ++s)
          if (of.needed(row, s, r2, image)) {
            for (int k = 0; k < of.box.dimension; ++k)
              points(at, k) = image[k];
            ++at;
          }
      });
  return images;
}

// counts(q) += the counts of q's images.
template <class ExecutionSpace, class MemorySpace>
void add_image_counts(ExecutionSpace const& space, Kokkos::View<std::int64_t*, MemorySpace> counts,
                      Kokkos::View<std::int64_t*, MemorySpace> image_counts,
                      QueryImages<MemorySpace> const& images) {
  auto const offsets = images.offsets;
  Kokkos::parallel_for(
      "treetrav::QueryImages::add_counts",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, counts.extent(0)), KOKKOS_LAMBDA(Index q) {
        std::int64_t sum = counts(q);
        for (Index j = offsets(q); j < offsets(q + 1); ++j)
          sum += image_counts(j);
        counts(q) = sum;
      });
}

// Query q's k nearest (squared distances, nearest first, ties by index) in
// row q of (indices, distances), merged with its images' lists (each of
// their k' entries sorted the same way): a point met again keeps its nearer
// image; with exclude_self, q itself is skipped. Rows stay sorted by
// (distance, index), so the result is the k best over all images.
template <class ExecutionSpace, class MemorySpace, class Indices, class Distances,
          class ImageIndices, class ImageDistances>
void merge_image_neighbors(ExecutionSpace const& space, Indices const& indices,
                           Distances const& distances, ImageIndices const& image_indices,
                           ImageDistances const& image_distances,
                           QueryImages<MemorySpace> const& images, bool exclude_self) {
  auto const offsets = images.offsets;
  int const k = static_cast<int>(indices.extent(1));
  int const listed = static_cast<int>(image_indices.extent(1));
  Kokkos::parallel_for(
      "treetrav::QueryImages::merge_neighbors",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, indices.extent(0)), KOKKOS_LAMBDA(Index q) {
        for (Index j = offsets(q); j < offsets(q + 1); ++j)
          for (int t = 0; t < listed; ++t) {
            Index const p = image_indices(j, t);
            Coordinate const d = image_distances(j, t);
            if (exclude_self && p == q)
              continue;
            // Beyond the k-th: neither it nor the rest of this list enters.
            if (d > distances(q, k - 1) || (d == distances(q, k - 1) && p > indices(q, k - 1)))
              break;
            int at = k - 1; // where the entry leaves: p's own place, else the last
            for (int i = 0; i < k; ++i)
              if (indices(q, i) == p)
                at = i;
            if (indices(q, at) == p && distances(q, at) <= d)
              continue; // met nearer already
            // Remove entry `at`, then insert (d, p) in order.
            for (int i = at; i + 1 < k; ++i) {
              indices(q, i) = indices(q, i + 1);
              distances(q, i) = distances(q, i + 1);
            }
            int i = k - 1;
            for (; i > 0 && (distances(q, i - 1) > d ||
                             (distances(q, i - 1) == d && indices(q, i - 1) > p));
                 --i) {
              indices(q, i) = indices(q, i - 1);
              distances(q, i) = distances(q, i - 1);
            }
            indices(q, i) = p;
            distances(q, i) = d;
          }
      });
}

// Square roots of squared distances, in place: a list, or rows of k.
// (Two names: nvcc's device lambdas take no unnamed template parameters.)
template <class ExecutionSpace, class Distances>
void take_list_roots(ExecutionSpace const& space, Distances const& distances) {
  Kokkos::parallel_for(
      "treetrav::take_roots", Kokkos::RangePolicy<ExecutionSpace>(space, 0, distances.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { distances(i) = math::sqrt(distances(i)); });
}
template <class ExecutionSpace, class Distances>
void take_roots(ExecutionSpace const& space, Distances const& distances) {
  Kokkos::parallel_for(
      "treetrav::take_roots", Kokkos::RangePolicy<ExecutionSpace>(space, 0, distances.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        for (std::size_t j = 0; j < distances.extent(1); ++j)
          distances(i, j) = math::sqrt(distances(i, j));
      });
}

// CSR lists (offsets, indices, squared distances; each list by (distance,
// index)) of the queries and of their images, merged per query into one
// list in the same order. Lists of different images hold different points
// (a search's reach is below L / 2).
template <class MemorySpace>
struct ImageLists {
  Kokkos::View<std::int64_t*, MemorySpace> offsets;
  Kokkos::View<Index*, MemorySpace> indices;
  Kokkos::View<Coordinate*, MemorySpace> distances;
};

template <class ExecutionSpace, class MemorySpace>
ImageLists<MemorySpace> merge_image_lists(ExecutionSpace const& space,
                                          ImageLists<MemorySpace> const& own,
                                          ImageLists<MemorySpace> const& of_images,
                                          QueryImages<MemorySpace> const& images) {
  Index const n = static_cast<Index>(own.offsets.extent(0)) - 1;
  ImageLists<MemorySpace> merged;
  merged.offsets = Kokkos::View<std::int64_t*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::ImageLists::offsets"), n + 1);
  auto const image_offsets = images.offsets;
  auto const offsets = merged.offsets;
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "treetrav::ImageLists::count", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index q, std::int64_t & sum, bool final) {
        if (final)
          offsets(q) = sum;
        sum += own.offsets(q + 1) - own.offsets(q);
        for (Index j = image_offsets(q); j < image_offsets(q + 1); ++j)
          sum += of_images.offsets(j + 1) - of_images.offsets(j);
        if (final && q + 1 == n)
          offsets(n) = sum;
      },
      total);
  merged.indices = Kokkos::View<Index*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::ImageLists::indices"), total);
  merged.distances = Kokkos::View<Coordinate*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::ImageLists::distances"),
      total);
  auto const out = merged;
  Kokkos::parallel_for(
      "treetrav::ImageLists::merge", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index q) {
        // A merge of the query's list and its images' lists (at most 3^3):
        // each step takes the least head.
        constexpr int most = 27;
        std::int64_t head[most], end[most];
        int lists = 0;
        head[lists] = own.offsets(q);
        end[lists++] = own.offsets(q + 1);
        for (Index j = image_offsets(q); j < image_offsets(q + 1) && lists < most; ++j) {
          head[lists] = of_images.offsets(j);
          end[lists++] = of_images.offsets(j + 1);
        }
        for (std::int64_t at = out.offsets(q); at < out.offsets(q + 1); ++at) {
          int best = -1;
          Coordinate best_d = 0;
          Index best_p = 0;
          for (int l = 0; l < lists; ++l) {
            if (head[l] == end[l])
              continue;
            bool const mine = l == 0;
            Coordinate const d = mine ? own.distances(head[l]) : of_images.distances(head[l]);
            Index const p = mine ? own.indices(head[l]) : of_images.indices(head[l]);
            if (best < 0 || d < best_d || (d == best_d && p < best_p)) {
              best = l;
              best_d = d;
              best_p = p;
            }
          }
          out.indices(at) = best_p;
          out.distances(at) = best_d;
          ++head[best];
        }
      });
  return merged;
}

} // namespace treetrav::detail
