// `treetrav treefix` and `treetrav treefix-generate` as a user runs them:
// results equal the sequential reference for every shape, method and kind;
// bad input exits non-zero with a message naming the culprit and writes nothing.
#include <treetrav/io/tree_file.hpp>
#include <treetrav/treefix/generators.hpp>
#include <treetrav/treefix/sequential.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#ifndef TREETRAV_CLI
#error "TREETRAV_CLI must name the treetrav executable"
#endif

namespace {

using namespace treetrav;
namespace fs = std::filesystem;

struct Run {
  int exit_code;
  std::string output; // stdout and stderr
};

Run treetrav(std::string const& arguments) {
  std::string const command =
      std::string("OMP_PROC_BIND=false ") + TREETRAV_CLI + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  Run run{-1, {}};
  char buffer[4096];
  for (std::size_t read; (read = fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    run.output.append(buffer, read);
  int const status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class TreefixCli : public ::testing::Test {
protected:
  TreefixCli()
      : directory_(fs::temp_directory_path() /
                   ("treetrav-treefix-cli-" + std::to_string(::getpid()))) {
    fs::create_directories(directory_);
  }
  ~TreefixCli() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  std::string file(std::string const& name) const { return (directory_ / name).string(); }

private:
  fs::path directory_;
};

TEST_F(TreefixCli, EveryShapeMethodAndKindMatchesTheSequentialReference) {
  for (TreeShape shape : tree_shapes())
    for (std::string weights : {"uniform", "none"}) {
      std::string const name = to_string(shape) + "-" + weights;
      std::string const tree_file = file(name + ".h5");
      auto const generated =
          treetrav("treefix-generate --shape " + to_string(shape) + " -n 2000 --seed 3 --weights " +
                   weights + " -o " + tree_file);
      ASSERT_EQ(generated.exit_code, 0) << generated.output;
      auto const tree = io::read_tree(tree_file);
      for (std::string op : {"rootfix", "leaffix"})
        for (std::string method : {"bfs", "euler", "auto"}) {
          std::string const result_file = file(name + "-" + op + "-" + method + ".h5");
          auto const run = treetrav("treefix --op " + op + " --method " + method + " --input " +
                                    tree_file + " -o " + result_file);
          ASSERT_EQ(run.exit_code, 0) << run.output;
          auto const result = io::read_treefix_result(result_file);
          EXPECT_EQ(result.treefix, op);
          Treefix const kind = op == "rootfix" ? Treefix::rootfix : Treefix::leaffix;
          std::string const where = name + " " + op + " " + method;
          if (weights == "uniform") {
            auto const expected = sequential_treefix(kind, tree.tree, Sum<double>{}, tree.weights);
            ASSERT_EQ(result.values.extent(0), 2000u) << where;
            for (Index v = 0; v < 2000; ++v)
              ASSERT_NEAR(result.values(v), expected(v), 1e-12 * 2000 * std::abs(expected(v)))
                  << where << " " << v;
          } else {
            Kokkos::View<std::int64_t*, Kokkos::HostSpace> ones("ones", 2000);
            Kokkos::deep_copy(ones, 1);
            auto const expected = sequential_treefix(kind, tree.tree, Sum<std::int64_t>{}, ones);
            ASSERT_EQ(result.counts.extent(0), 2000u) << where;
            for (Index v = 0; v < 2000; ++v)
              ASSERT_EQ(result.counts(v), expected(v)) << where << " " << v;
          }
          if (method == "auto")
            EXPECT_EQ(result.metadata.text.at("method"), to_string(choose_method(tree.tree, kind)))
                << where;
        }
    }
}

TEST_F(TreefixCli, BadInputExitsTwoNamingItAndWritesNothing) {
  auto const missing =
      treetrav("treefix --op rootfix --input " + file("missing.h5") + " -o " + file("out.h5"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("missing.h5: file does not exist"), std::string::npos)
      << missing.output;

  // A points file is no tree file.
  ASSERT_EQ(treetrav("generate --dist uniform -n 10 -o " + file("points.h5")).exit_code, 0);
  auto const points =
      treetrav("treefix --op leaffix --input " + file("points.h5") + " -o " + file("out.h5"));
  EXPECT_EQ(points.exit_code, 2);
  EXPECT_NE(points.output.find("/Tree/Parent: dataset is missing"), std::string::npos)
      << points.output;

  auto const op =
      treetrav("treefix --op sideways --input " + file("points.h5") + " -o " + file("out.h5"));
  EXPECT_EQ(op.exit_code, 2);
  EXPECT_NE(op.output.find("--op"), std::string::npos) << op.output;

  auto const directory = treetrav("treefix --op rootfix --input " + file("points.h5") + " -o " +
                                  file("nowhere/out.h5"));
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_NE(directory.output.find("does not exist"), std::string::npos) << directory.output;
  EXPECT_FALSE(fs::exists(file("out.h5")));

  auto const arity =
      treetrav("treefix-generate --shape star -n 10 --arity 3 -o " + file("star.h5"));
  EXPECT_EQ(arity.exit_code, 2);
  EXPECT_NE(arity.output.find("--arity does not apply to --shape star"), std::string::npos)
      << arity.output;
  auto const size = treetrav("treefix-generate --shape star -n 0 -o " + file("star.h5"));
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_FALSE(fs::exists(file("star.h5")));
}

} // namespace
