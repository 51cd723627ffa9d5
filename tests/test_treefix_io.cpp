// Tree files and treefix result files: round trips, the layout other tools
// write (int64 parents, float32 weights), and the reader's validation: every
// malformed tree is an InputError naming the file, the dataset and the vertex.
#include <treetrav/core/error.hpp>
#include <treetrav/io/tree_file.hpp>
#include <treetrav/treefix/generators.hpp>

#include "../src/io/hdf5_file.hpp" // detail::write_atomically, to write malformed files

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
using Host = Kokkos::DefaultHostExecutionSpace;
namespace fs = std::filesystem;

class TreeFiles : public ::testing::Test {
protected:
  TreeFiles()
      : directory_(fs::temp_directory_path() /
                   ("treetrav-tree-files-" +
                    std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                    "-" + std::to_string(::getpid()))) {
    fs::create_directories(directory_);
  }
  ~TreeFiles() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  std::string file(std::string const& name) const { return (directory_ / name).string(); }

private:
  fs::path directory_;
};

// A /Tree group holding what a foreign tool might write.
void write_raw_tree(std::string const& path, std::vector<std::int64_t> const& parents,
                    std::vector<float> const& weights = {}) {
  io::detail::write_atomically(path, [&](io::detail::FileWriter& out) {
    out.create_group("/Tree");
    out.write("/Tree/Parent", {parents.size()}, parents.data());
    if (!weights.empty())
      out.write("/Tree/Weight", {weights.size()}, weights.data());
  });
}

// Expects read_tree(path) to throw InputError naming every one of `parts`.
void expect_rejected(std::string const& path, std::vector<std::string> const& parts) {
  try {
    io::read_tree(path);
    ADD_FAILURE() << path << " was accepted";
  } catch (InputError const& error) {
    std::string const message = error.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    for (auto const& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TEST_F(TreeFiles, RoundTripWithAndWithoutWeights) {
  RootedTree<Kokkos::HostSpace> const tree(
      Host{}, generate_tree(Host{}, TreeShape::random_geometric, 3000, 4));
  io::TreeFile written{tree, uniform_weights<double>(Host{}, 3000, 4), {}};
  written.metadata.set("generator", "rgg").set("n", 3000.0);
  io::write_tree(file("weighted.h5"), written);
  io::write_tree(file("plain.h5"), {tree, {}, {}});

  auto const weighted = io::read_tree(file("weighted.h5"));
  auto const plain = io::read_tree(file("plain.h5"));
  for (auto const* read : {&weighted, &plain}) {
    ASSERT_EQ(read->tree.size(), 3000);
    EXPECT_EQ(read->tree.root(), tree.root());
    EXPECT_EQ(read->tree.height(), tree.height());
    for (Index v = 0; v < 3000; ++v)
      ASSERT_EQ(read->tree.parents()(v), tree.parents()(v)) << v;
  }
  ASSERT_EQ(weighted.weights.extent(0), 3000u);
  for (Index v = 0; v < 3000; ++v)
    ASSERT_EQ(weighted.weights(v), written.weights(v)) << v;
  EXPECT_EQ(plain.weights.extent(0), 0u);
  EXPECT_EQ(weighted.metadata.text.at("generator"), "rgg");
  EXPECT_EQ(weighted.metadata.numbers.at("n"), 3000.0);
}

TEST_F(TreeFiles, ReadInt64ParentsAndFloat32WeightsFromOtherTools) {
  write_raw_tree(file("foreign.h5"), {2, 2, -1, 1}, {0.5f, 1.5f, 2.5f, 3.5f});
  auto const read = io::read_tree(file("foreign.h5"));
  EXPECT_EQ(read.tree.root(), 2);
  EXPECT_EQ(read.tree.height(), 2);
  EXPECT_EQ(read.weights(3), 3.5);
}

TEST_F(TreeFiles, RejectMalformedParentArraysNamingTheVertex) {
  write_raw_tree(file("range.h5"), {-1, std::int64_t{1} << 40, 0});
  expect_rejected(file("range.h5"), {"/Tree/Parent", "vertex 1 has parent 1099511627776"});
  write_raw_tree(file("cycle.h5"), {-1, 0, 3, 2});
  expect_rejected(file("cycle.h5"), {"/Tree/Parent", "is on a cycle", "root 0"});
  write_raw_tree(file("roots.h5"), {-1, 0, -1});
  expect_rejected(file("roots.h5"), {"/Tree/Parent", "vertices 0 and 2"});
  write_raw_tree(file("rootless.h5"), {1, 0});
  expect_rejected(file("rootless.h5"), {"/Tree/Parent", "no root"});
  write_raw_tree(file("empty.h5"), {});
  expect_rejected(file("empty.h5"), {"/Tree/Parent", "empty"});
}

TEST_F(TreeFiles, RejectBadWeightsAndMissingData) {
  write_raw_tree(file("short.h5"), {-1, 0, 0}, {1.0f, 2.0f});
  expect_rejected(file("short.h5"), {"/Tree/Weight", "2 rows", "/Tree/Parent has 3"});
  write_raw_tree(file("nan.h5"), {-1, 0}, {1.0f, std::nanf("")});
  expect_rejected(file("nan.h5"), {"/Tree/Weight", "row 1 is NaN"});
  io::detail::write_atomically(file("no-parents.h5"),
                               [](io::detail::FileWriter& out) { out.create_group("/Tree"); });
  expect_rejected(file("no-parents.h5"), {"/Tree/Parent", "missing"});
}

// NumVertices and Height restate the tree: a file that contradicts itself is refused.
TEST_F(TreeFiles, RejectAttributesThatContradictTheTree) {
  std::vector<std::int64_t> const parents{-1, 0, 0, 1}; // 4 vertices, height 2
  auto const write_with = [&](std::string const& path, std::int64_t vertices, std::int64_t height) {
    io::detail::write_atomically(path, [&](io::detail::FileWriter& out) {
      auto const group = out.create_group("/Tree");
      out.set_attribute(group.get(), "NumVertices", vertices);
      out.set_attribute(group.get(), "Height", height);
      out.write("/Tree/Parent", {parents.size()}, parents.data());
    });
  };
  write_with(file("consistent.h5"), 4, 2);
  EXPECT_EQ(io::read_tree(file("consistent.h5")).tree.size(), 4);
  write_with(file("vertices.h5"), 1000, 2);
  expect_rejected(file("vertices.h5"), {"/Tree", "NumVertices is 1000", "/Tree/Parent is 4"});
  write_with(file("negative.h5"), -1, 2);
  expect_rejected(file("negative.h5"), {"NumVertices is -1"});
  write_with(file("height.h5"), 4, 3);
  expect_rejected(file("height.h5"), {"Height is 3", "is 2"});
}

TEST_F(TreeFiles, TreefixResultsRoundTripAsValuesOrCounts) {
  io::TreefixResultFile values{
      "rootfix", Kokkos::View<double*, Kokkos::HostSpace>("values", 3), {}, {}};
  values.values(2) = 1.25;
  values.metadata.set("method", "euler");
  io::write_treefix_result(file("values.h5"), values);
  io::TreefixResultFile counts{
      "leaffix", {}, Kokkos::View<std::int64_t*, Kokkos::HostSpace>("counts", 4), {}};
  counts.counts(0) = 4;
  io::write_treefix_result(file("counts.h5"), counts);

  auto const read_values = io::read_treefix_result(file("values.h5"));
  EXPECT_EQ(read_values.treefix, "rootfix");
  ASSERT_EQ(read_values.values.extent(0), 3u);
  EXPECT_EQ(read_values.values(2), 1.25);
  EXPECT_EQ(read_values.counts.extent(0), 0u);
  EXPECT_EQ(read_values.metadata.text.at("method"), "euler");
  auto const read_counts = io::read_treefix_result(file("counts.h5"));
  EXPECT_EQ(read_counts.treefix, "leaffix");
  ASSERT_EQ(read_counts.counts.extent(0), 4u);
  EXPECT_EQ(read_counts.counts(0), 4);

  EXPECT_THROW(io::write_treefix_result(file("neither.h5"), {"rootfix", {}, {}, {}}),
               std::invalid_argument);
  EXPECT_THROW(io::write_treefix_result(file("sideways.h5"), {"sideways", values.values, {}, {}}),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(file("neither.h5")));
}

} // namespace
