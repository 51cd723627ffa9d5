#pragma once

#include <treetrav/io/metadata.hpp>
#include <treetrav/treefix/rooted_tree.hpp>

#include <cstdint>
#include <string>

namespace treetrav::io {

// A tree for treefix as stored in HDF5:
//   /Tree/Parent       int32 (n): the parent of each vertex, -1 for the root
//                      (int64 is read too)
//   /Tree/Weight       float64 (n), optional (float32 is read too)
//   /Tree attributes   NumVertices (int64) and Height (int64), for people
//   /RunMetadata       attributes from `metadata`
struct TreeFile {
  RootedTree<Kokkos::HostSpace> tree;
  Kokkos::View<double*, Kokkos::HostSpace> weights; // extent 0 when the file has none
  Metadata metadata;
};

// Written to a temporary file in the same directory and renamed into place.
void write_tree(std::string const& path, TreeFile const& file);

// Validates the parent array (not empty, parents in [-1, n), one root, no
// cycle) and the weights (n finite values); throws InputError
// "<path>: /Tree/Parent: vertex 7 is on a cycle of parent links, ..." otherwise.
// Needs Kokkos initialised: the checks run on the default host space.
TreeFile read_tree(std::string const& path);

// The output of `treetrav treefix`:
//   /Treefix/Values    float64 (n): the weighted treefix, or
//   /Treefix/Counts    int64 (n): without weights, vertices on the path from
//                      the root (rootfix) or in the subtree (leaffix)
//   /Treefix attribute Treefix: "rootfix" or "leaffix"
//   /RunMetadata       method, backend, timings, ...
struct TreefixResultFile {
  std::string treefix;
  Kokkos::View<double*, Kokkos::HostSpace> values;       // extent 0 unless weighted
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> counts; // extent 0 unless unweighted
  Metadata metadata;
};

void write_treefix_result(std::string const& path, TreefixResultFile const& result);
TreefixResultFile read_treefix_result(std::string const& path);

} // namespace treetrav::io
