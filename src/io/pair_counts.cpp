#include <treetrav/io/pair_counts.hpp>

#include "hdf5_file.hpp"

#include <fmt/core.h>

#include <cmath>
#include <stdexcept>

namespace treetrav::io {
namespace {

constexpr char const group[] = "/PairCounts";
constexpr char const edges_dataset[] = "/PairCounts/Edges";
constexpr char const counts_dataset[] = "/PairCounts/Counts";
constexpr char const weighted_dataset[] = "/PairCounts/WeightedCounts";
constexpr char const rr_dataset[] = "/PairCounts/RR";
constexpr char const xi_dataset[] = "/PairCounts/Xi";
constexpr char const weights_dataset[] = "/Points/Weights";

} // namespace

void write_pair_counts(std::string const& path, PairCountFile const& file) {
  std::size_t const bins = file.counts.size();
  if (bins == 0 || file.edges.size() != bins + 1 ||
      (!file.weighted.empty() && file.weighted.size() != bins) ||
      file.rr.size() != file.xi.size() || (!file.xi.empty() && file.xi.size() != bins))
    throw std::invalid_argument(path + ": inconsistent pair counts (bins, edges, weights, xi)");
  detail::write_atomically(path, [&](detail::FileWriter& out) {
    auto const g = out.create_group(group);
    out.set_attribute(g.get(), "Bins", std::int64_t(bins));
    out.set_attribute(g.get(), "Autocorrelation", std::int32_t(file.autocorrelation ? 1 : 0));
    out.set_attribute(g.get(), "Pairs", file.pairs);
    out.set_attribute(g.get(), "WeightPairs", file.weight_pairs);
    if (!file.box.empty())
      out.set_attribute(g.get(), "BoxSize", file.box);
    out.write(edges_dataset, {bins + 1}, file.edges.data());
    std::vector<std::int64_t> const counts(file.counts.begin(), file.counts.end());
    out.write(counts_dataset, {bins}, counts.data());
    if (!file.weighted.empty())
      out.write(weighted_dataset, {bins}, file.weighted.data());
    if (!file.xi.empty()) {
      out.write(rr_dataset, {bins}, file.rr.data());
      out.write(xi_dataset, {bins}, file.xi.data());
    }
    out.write_metadata(detail::metadata_group, file.metadata);
  });
}

PairCountFile read_pair_counts(std::string const& path) {
  detail::FileReader const in(path);
  PairCountFile file;
  file.edges = in.read<double>(edges_dataset, 1).values;
  auto const counts = in.read<std::int64_t>(counts_dataset, 1).values;
  if (file.edges.size() != counts.size() + 1)
    in.fail(edges_dataset, fmt::format("has {} edges for {} bins", file.edges.size(), counts.size()));
  file.counts.assign(counts.begin(), counts.end());
  if (in.exists(weighted_dataset))
    file.weighted = in.read<double>(weighted_dataset, 1).values;
  if (in.exists(xi_dataset)) {
    file.rr = in.read<double>(rr_dataset, 1).values;
    file.xi = in.read<double>(xi_dataset, 1).values;
  }
  file.autocorrelation = in.read_numbers(group, "Autocorrelation").at(0) != 0;
  file.pairs = in.read_numbers(group, "Pairs").at(0);
  file.weight_pairs = in.read_numbers(group, "WeightPairs").at(0);
  if (in.has_attribute(group, "BoxSize"))
    file.box = in.read_numbers(group, "BoxSize");
  file.metadata = in.read_metadata(detail::metadata_group);
  return file;
}

std::vector<float> read_point_weights(std::string const& path) {
  detail::FileReader const in(path);
  if (!in.exists(weights_dataset))
    return {};
  auto const weights = in.read<float>(weights_dataset, 1);
  detail::require_finite(in, weights_dataset, weights);
  return weights.values;
}

} // namespace treetrav::io
