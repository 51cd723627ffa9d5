#include <treetrav/core/error.hpp>
#include <treetrav/io/results.hpp>

#include "hdf5_file.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <type_traits>
#include <vector>

namespace treetrav::io {
namespace {

constexpr char const results_group[] = "/Results";
constexpr char const indices_dataset[] = "/Results/NeighborIndices";
constexpr char const distances_dataset[] = "/Results/NeighborDistances";
constexpr char const counts_dataset[] = "/Results/Counts";
constexpr char const accelerations_dataset[] = "/Results/Accelerations";
constexpr char const list_offsets_dataset[] = "/Results/ListOffsets";
constexpr char const list_indices_dataset[] = "/Results/ListIndices";
constexpr char const list_distances_dataset[] = "/Results/ListDistances";
constexpr char const error_sample_dataset[] = "/Results/ErrorSample";
constexpr char const error_exact_dataset[] = "/Results/ErrorSampleExact";

// Members with extent 0 were not filled by the application and are not stored.
template <class View>
bool present(View const& view) {
  return view.extent(0) != 0;
}

} // namespace

void write_results(std::string const& path, QueryResults const& results) {
  if (present(results.neighbor_indices) && present(results.neighbor_distances) &&
      (results.neighbor_indices.extent(0) != results.neighbor_distances.extent(0) ||
       results.neighbor_indices.extent(1) != results.neighbor_distances.extent(1)))
    throw std::invalid_argument(path + ": neighbor indices and distances differ in shape");
  if (present(results.accelerations) && results.accelerations.extent(1) != 3)
    throw std::invalid_argument(path + ": accelerations must have 3 columns");
  if (present(results.list_offsets) &&
      (results.list_indices.extent(0) != results.list_distances.extent(0) ||
       results.list_offsets(results.list_offsets.extent(0) - 1) !=
           std::int64_t(results.list_indices.extent(0))))
    throw std::invalid_argument(path + ": neighbour lists and their offsets disagree");
  if (results.error_exact.extent(0) != results.error_sample.extent(0) ||
      (present(results.error_exact) && results.error_exact.extent(1) != 3))
    throw std::invalid_argument(path + ": the error sample and its exact accelerations differ in shape");

  detail::write_atomically(path, [&](detail::FileWriter& out) {
    auto const group = out.create_group(results_group);
    out.set_attribute(group.get(), "Application", results.application);
    if (present(results.neighbor_indices))
      detail::write_matrix(out, indices_dataset, results.neighbor_indices);
    if (present(results.neighbor_distances))
      detail::write_matrix(out, distances_dataset, results.neighbor_distances);
    if (present(results.counts))
      detail::write_vector(out, counts_dataset, results.counts);
    if (present(results.list_offsets)) {
      detail::write_vector(out, list_offsets_dataset, results.list_offsets);
      detail::write_vector(out, list_indices_dataset, results.list_indices);
      detail::write_vector(out, list_distances_dataset, results.list_distances);
    }
    if (present(results.accelerations))
      detail::write_matrix(out, accelerations_dataset, results.accelerations);
    if (present(results.error_sample)) {
      detail::write_vector(out, error_sample_dataset, results.error_sample);
      detail::write_matrix(out, error_exact_dataset, results.error_exact);
    }
    out.write_metadata(detail::metadata_group, results.metadata);
  });
}

struct ResultsStream::File {
  detail::AtomicFile atomic;
  Index queries;
  Collective writers;
  Index first = 0;            // this process's first query
  Index next = 0;             // the first query of the next block
  std::uint64_t processes = 1; // writing the file together
  std::int64_t listed = 0;    // neighbours in the lists so far
  detail::Handle indices, distances, counts, offsets, list_indices, list_distances;
};

ResultsStream::ResultsStream(std::string const& path, std::string const& application,
                             Index queries, Collective const& writers, Index first)
    : file_(new File{detail::AtomicFile(path, writers), queries, writers, first, first}) {
  file_->processes = detail::sum_over(writers, {1})[0];
  auto const& out = file_->atomic.writer();
  auto const group = out.create_group(results_group);
  out.set_attribute(group.get(), "Application", application);
}

ResultsStream::~ResultsStream() = default;

void ResultsStream::write(Index first, QueryResults const& block) {
  auto& file = *file_;
  auto const& out = file.atomic.writer();
  if (first != file.next)
    throw std::logic_error(fmt::format("{}: results of query {} written after query {}",
                                       out.path(), first, file.next));
  hsize_t const n = static_cast<hsize_t>(file.queries), at = static_cast<hsize_t>(first);
  // Datasets are created with the first block, which shows which members the
  // search fills; the processes writing together agree on it first (one of
  // them may have no rows: its members are empty, but for their columns).
  enum Member : std::uint64_t { neighbours, counts, lists, columns };
  std::vector<std::uint64_t> filled{
      present(block.neighbor_indices) || block.neighbor_indices.extent(1) != 0,
      present(block.counts), present(block.list_offsets), block.neighbor_indices.extent(1)};
  if (!file.indices.valid() && !file.counts.valid() && !file.offsets.valid())
    filled = detail::sum_over(file.writers, filled);
  auto rows_of = [&](detail::Handle& set, char const* name, auto const& rows) {
    using Value = typename std::decay_t<decltype(rows)>::non_const_value_type;
    hsize_t const width = filled[neighbours] > 0 ? filled[columns] / filled[neighbours] : 0;
    if (!set.valid()) set = out.create<Value>(name, {n, width});
    out.write_rows(set.get(), at, {rows.extent(0), width}, rows.data());
  };
  if (file.indices.valid() || (filled[neighbours] > 0 && filled[counts] + filled[lists] == 0)) {
    rows_of(file.indices, indices_dataset, block.neighbor_indices);
    rows_of(file.distances, distances_dataset, block.neighbor_distances);
    file.next += static_cast<Index>(block.neighbor_indices.extent(0));
  } else if (file.counts.valid() || (filled[counts] > 0 && filled[lists] == 0)) {
    if (!file.counts.valid()) file.counts = out.create<std::int64_t>(counts_dataset, {n});
    out.write_rows(file.counts.get(), at, {block.counts.extent(0)}, block.counts.data());
    file.next += static_cast<Index>(block.counts.extent(0));
  } else if (file.offsets.valid() || filled[lists] > 0) {
    // Written together, every process writes one block of lists, after those
    // of the processes before it: the lists' datasets are made at their
    // whole length at once (an extendible dataset grows collectively only).
    bool const together = file.processes > 1;
    if (together && file.offsets.valid())
      throw std::logic_error(out.path() + ": radius lists written together come in one block a process");
    hsize_t const listed = block.list_indices.extent(0);
    hsize_t const total = together ? detail::sum_over(file.writers, {listed})[0] : 0;
    // The block's offsets count from its first neighbour; the file's from the first query's.
    std::int64_t const first_entry =
        together ? static_cast<std::int64_t>(detail::sum_before(file.writers, listed)) : file.listed;
    if (!file.offsets.valid()) {
      file.offsets = out.create<std::int64_t>(list_offsets_dataset, {n + 1});
      file.list_indices = out.create<Index>(list_indices_dataset, {total}, /*extendible=*/!together);
      file.list_distances = out.create<Coordinate>(list_distances_dataset, {total}, !together);
    }
    hsize_t const rows = block.list_offsets.extent(0) - 1;
    std::vector<std::int64_t> offsets(rows);
    for (hsize_t q = 0; q < rows; ++q) offsets[q] = first_entry + block.list_offsets(q);
    out.write_rows(file.offsets.get(), at, {rows}, offsets.data());
    out.write_rows(file.list_indices.get(), first_entry, {listed}, block.list_indices.data());
    out.write_rows(file.list_distances.get(), first_entry, {listed}, block.list_distances.data());
    file.listed = together ? static_cast<std::int64_t>(total) : file.listed + static_cast<std::int64_t>(listed);
    file.next += static_cast<Index>(rows);
  } else {
    throw std::logic_error(out.path() + ": a block without search results");
  }
  if (file.next > file.queries)
    throw std::logic_error(fmt::format("{}: results for {} queries, not {}", out.path(),
                                       file.next, file.queries));
}

void ResultsStream::commit(Metadata const& metadata) {
  auto& file = *file_;
  auto const& out = file.atomic.writer();
  // Each process's blocks follow one another from its first row: together
  // they cover the file's rows when their counts add up.
  auto const written = detail::sum_over(file.writers, {std::uint64_t(file.next - file.first)})[0];
  if (written != std::uint64_t(file.queries))
    throw std::logic_error(fmt::format("{}: results for {} of {} queries", out.path(), written,
                                       file.queries));
  // The closing offset: the total, written by the process whose rows end the
  // file (written together, all of those that end there: the same value).
  if (file.offsets.valid())
    out.write_rows(file.offsets.get(), static_cast<hsize_t>(file.queries),
                   {file.next == file.queries ? hsize_t(1) : hsize_t(0)}, &file.listed);
  // Closed before the file, which closes only when its last object does.
  for (auto* set : {&file.indices, &file.distances, &file.counts, &file.offsets, &file.list_indices,
                    &file.list_distances})
    if (set->close() < 0) throw std::runtime_error(out.path() + ": cannot finish writing (disk full?)");
  out.write_metadata(detail::metadata_group, metadata);
  file.atomic.commit();
}

QueryResults read_results(std::string const& path) {
  detail::FileReader const in(path);
  if (!in.exists(results_group))
    in.fail(results_group, "group is missing (not a results file)");

  QueryResults results;
  results.application = in.read_text(results_group, "Application");
  if (in.exists(indices_dataset)) {
    auto const indices = in.read<Index>(indices_dataset, 2);
    results.neighbor_indices =
        detail::to_matrix<Index, Kokkos::LayoutRight>(indices, "treetrav::io::neighbor_indices");
  }
  if (in.exists(distances_dataset)) {
    auto const distances = in.read<Coordinate>(distances_dataset, 2);
    // +inf is how a query with fewer than k neighbours marks the empty slots.
    detail::require_finite(in, distances_dataset, distances, /*allow_infinity=*/true);
    if (in.exists(indices_dataset)) {
      detail::require_rows(in, distances_dataset, distances, results.neighbor_indices.extent(0),
                           indices_dataset);
      detail::require_columns(in, distances_dataset, distances, results.neighbor_indices.extent(1));
    }
    results.neighbor_distances = detail::to_matrix<Coordinate, Kokkos::LayoutRight>(
        distances, "treetrav::io::neighbor_distances");
  }
  if (in.exists(counts_dataset)) {
    auto const counts = in.read<std::int64_t>(counts_dataset, 1);
    results.counts = detail::to_vector(counts, "treetrav::io::counts");
  }
  if (in.exists(list_offsets_dataset)) {
    auto const offsets = in.read<std::int64_t>(list_offsets_dataset, 1);
    auto const indices = in.read<Index>(list_indices_dataset, 1);
    auto const distances = in.read<Coordinate>(list_distances_dataset, 1);
    detail::require_finite(in, list_distances_dataset, distances);
    bool monotone = !offsets.values.empty() && offsets.values.front() == 0 &&
                    offsets.values.back() == std::int64_t(indices.values.size()) &&
                    distances.values.size() == indices.values.size();
    for (std::size_t q = 1; monotone && q < offsets.values.size(); ++q)
      monotone = offsets.values[q - 1] <= offsets.values[q];
    if (!monotone)
      in.fail(list_offsets_dataset,
              "offsets must rise from 0 to the length of ListIndices and ListDistances");
    results.list_offsets = detail::to_vector(offsets, "treetrav::io::list_offsets");
    results.list_indices = detail::to_vector(indices, "treetrav::io::list_indices");
    results.list_distances = detail::to_vector(distances, "treetrav::io::list_distances");
  }
  if (in.exists(accelerations_dataset)) {
    auto const accelerations = in.read<double>(accelerations_dataset, 2);
    detail::require_columns(in, accelerations_dataset, accelerations, 3);
    detail::require_finite(in, accelerations_dataset, accelerations);
    results.accelerations = detail::to_matrix(accelerations, "treetrav::io::accelerations");
  }
  if (in.exists(error_sample_dataset) || in.exists(error_exact_dataset)) {
    auto const sample = in.read<std::int64_t>(error_sample_dataset, 1);
    auto const exact = in.read<double>(error_exact_dataset, 2);
    detail::require_rows(in, error_exact_dataset, exact, sample.rows(), error_sample_dataset);
    detail::require_columns(in, error_exact_dataset, exact, 3);
    results.error_sample = detail::to_vector(sample, "treetrav::io::error_sample");
    results.error_exact = detail::to_matrix(exact, "treetrav::io::error_exact");
  }
  results.metadata = in.read_metadata(detail::metadata_group);
  return results;
}

} // namespace treetrav::io
