#include <treetrav/core/error.hpp>
#include <treetrav/io/tree_file.hpp>

#include "hdf5_file.hpp"

#include <fmt/core.h>

#include <stdexcept>

namespace treetrav::io {
namespace {

constexpr char const tree_group[] = "/Tree";
constexpr char const parent_dataset[] = "/Tree/Parent";
constexpr char const weight_dataset[] = "/Tree/Weight";
constexpr char const treefix_group[] = "/Treefix";
constexpr char const values_dataset[] = "/Treefix/Values";
constexpr char const counts_dataset[] = "/Treefix/Counts";

// Read as int64 so that a parent beyond the Index range is reported as it is,
// then narrowed once in range.
Kokkos::View<Index*, Kokkos::HostSpace> read_parents(detail::FileReader const& in) {
  auto const parents = in.read<std::int64_t>(parent_dataset, 1);
  std::int64_t const n = static_cast<std::int64_t>(parents.rows());
  if (n == 0)
    in.fail(parent_dataset, "is empty: a tree has at least one vertex");
  if (n > max_tree_vertices)
    in.fail(parent_dataset,
            fmt::format("has {} vertices, more than the {} supported", n, max_tree_vertices));
  Kokkos::View<Index*, Kokkos::HostSpace> narrowed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::io::tree::parents"), n);
  for (std::int64_t v = 0; v < n; ++v) {
    std::int64_t const parent = parents.values[v];
    if (parent < no_parent || parent >= n)
      in.fail(parent_dataset,
              fmt::format("vertex {} has parent {}, outside [-1, {})", v, parent, n));
    narrowed(v) = static_cast<Index>(parent);
  }
  return narrowed;
}

} // namespace

void write_tree(std::string const& path, TreeFile const& file) {
  auto const& tree = file.tree;
  if (tree.size() == 0)
    throw std::invalid_argument(path + ": refusing to write an empty tree");
  if (file.weights.extent(0) != 0 &&
      file.weights.extent(0) != static_cast<std::size_t>(tree.size()))
    throw std::invalid_argument(
        fmt::format("{}: {} weights for {} vertices", path, file.weights.extent(0), tree.size()));

  detail::write_atomically(path, [&](detail::FileWriter& out) {
    auto const group = out.create_group(tree_group);
    out.set_attribute(group.get(), "NumVertices", std::int64_t{tree.size()});
    out.set_attribute(group.get(), "Height", std::int64_t{tree.height()});
    detail::write_vector(out, parent_dataset, tree.parents());
    if (file.weights.extent(0) != 0)
      detail::write_vector(out, weight_dataset, file.weights);
    out.write_metadata(detail::metadata_group, file.metadata);
  });
}

TreeFile read_tree(std::string const& path) {
  detail::FileReader const in(path);
  auto const parents = read_parents(in);
  TreeFile file;
  try {
    file.tree = RootedTree<Kokkos::HostSpace>(Kokkos::DefaultHostExecutionSpace{}, parents);
  } catch (InputError const& error) {
    in.fail(parent_dataset, error.what());
  }
  detail::require_attribute_agrees(in, tree_group, "NumVertices", 0, file.tree.size(),
                                   std::string("the length of ") + parent_dataset);
  detail::require_attribute_agrees(in, tree_group, "Height", 0, file.tree.height(),
                                   std::string("the height of the tree of ") + parent_dataset);
  if (in.exists(weight_dataset)) {
    auto const weights = in.read<double>(weight_dataset, 1);
    detail::require_rows(in, weight_dataset, weights, parents.extent(0), parent_dataset);
    detail::require_finite(in, weight_dataset, weights);
    file.weights = detail::to_vector(weights, "treetrav::io::tree::weights");
  }
  file.metadata = in.read_metadata(detail::metadata_group);
  return file;
}

void write_treefix_result(std::string const& path, TreefixResultFile const& result) {
  if (result.treefix != "rootfix" && result.treefix != "leaffix")
    throw std::invalid_argument(path + ": treefix must be rootfix or leaffix, not '" +
                                result.treefix + "'");
  if ((result.values.extent(0) == 0) == (result.counts.extent(0) == 0))
    throw std::invalid_argument(path + ": a treefix result holds either values or counts");

  detail::write_atomically(path, [&](detail::FileWriter& out) {
    auto const group = out.create_group(treefix_group);
    out.set_attribute(group.get(), "Treefix", result.treefix);
    if (result.values.extent(0) != 0)
      detail::write_vector(out, values_dataset, result.values);
    else
      detail::write_vector(out, counts_dataset, result.counts);
    out.write_metadata(detail::metadata_group, result.metadata);
  });
}

TreefixResultFile read_treefix_result(std::string const& path) {
  detail::FileReader const in(path);
  if (!in.exists(treefix_group))
    in.fail(treefix_group, "group is missing (not a treefix result file)");
  TreefixResultFile result;
  result.treefix = in.read_text(treefix_group, "Treefix");
  if (in.exists(values_dataset))
    result.values =
        detail::to_vector(in.read<double>(values_dataset, 1), "treetrav::io::treefix::values");
  else
    result.counts = detail::to_vector(in.read<std::int64_t>(counts_dataset, 1),
                                      "treetrav::io::treefix::counts");
  result.metadata = in.read_metadata(detail::metadata_group);
  return result;
}

} // namespace treetrav::io
