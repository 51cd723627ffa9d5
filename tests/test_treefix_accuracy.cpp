// The accuracy study (§IV-B) on every backend: the generator reaches the
// prescribed condition numbers, float errors stay within the classical bound,
// the vectorial leaffix loses accuracy the breadth-first one keeps (the
// paper's finding), and both compensated variants take that loss back out.
#include "execution_spaces.hpp"

#include <treetrav/treefix/accuracy.hpp>

#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace {

using namespace treetrav;

template <class Space>
class TreefixAccuracy : public ::testing::Test {};
TYPED_TEST_SUITE(TreefixAccuracy, test::ExecutionSpaces, test::SpaceName);

TYPED_TEST(TreefixAccuracy, CompensationRemovesTheVectorialMethodsExtraError) {
  double const u = std::numeric_limits<float>::epsilon() / 2;
  AccuracyStudy study;
  study.vertices = 2000;
  study.conditions = {1e3, 1e9};
  study.trials = 2;
  auto const samples = accuracy_study(TypeParam{}, study);
  ASSERT_EQ(samples.size(), std::size_t(2 * 2 * 2 * 4));

  // Worst error over the trials, per (treefix, method, condition).
  std::map<std::tuple<Treefix, std::string, double>, double> worst;
  for (auto const& sample : samples) {
    std::string const where = to_string(sample.treefix) + " " + sample.method + " at " +
                              std::to_string(sample.condition) + ", trial " +
                              std::to_string(sample.trial);
    EXPECT_GE(sample.max_condition, sample.condition / 2) << where;
    EXPECT_LE(sample.max_condition, sample.condition * 100) << where;
    if (sample.method == "bfs") // Higham: at most (terms - 1) u times the condition number
      EXPECT_LE(sample.max_relative_error, study.vertices * u * sample.condition_at_max) << where;
    auto& entry = worst[{sample.treefix, sample.method, sample.condition}];
    entry = std::max(entry, sample.max_relative_error);
  }
  auto const worst_of = [&](Treefix kind, std::string const& method, double condition) {
    return worst.at({kind, method, condition});
  };
  for (Treefix kind : {Treefix::rootfix, Treefix::leaffix}) {
    for (std::string method : {"euler-compensated", "euler-widened"}) {
      // Only the final rounding to float is left on moderately conditioned sums...
      EXPECT_LE(worst_of(kind, method, 1e3), 1.01 * u) << to_string(kind) << " " << method;
      // ... and far less than the plain float methods' error on ill-conditioned ones:
      // double partial sums by three orders of magnitude; float-float pairs (48
      // significant bits) by two, as a parallel scan (CUB's on Cuda) groups the
      // tour's steps into partial sums far larger than any vertex's ancestors' sum.
      double const gain = method == "euler-widened" ? 1e-3 : 1e-2;
      EXPECT_LT(worst_of(kind, method, 1e9), gain * worst_of(kind, "bfs", 1e9))
          << to_string(kind) << " " << method;
    }
  }
  // The vectorial leaffix subtracts two prefixes that hold unrelated subtrees.
  EXPECT_GT(worst_of(Treefix::leaffix, "euler", 1e3), 10 * worst_of(Treefix::leaffix, "bfs", 1e3));
}

TEST(TreefixAccuracy, IllConditionedWeightsAreDeterministicAndRejectConditionsBelowOne) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  RootedTree<Kokkos::HostSpace> const tree(
      Host{}, generate_tree(Host{}, TreeShape::random_recursive, 500, 3));
  auto const a = ill_conditioned_weights(tree, Treefix::leaffix, 1e6, 5);
  auto const b = ill_conditioned_weights(tree, Treefix::leaffix, 1e6, 5);
  for (Index v = 0; v < tree.size(); ++v)
    ASSERT_EQ(a(v), b(v)) << v;
  EXPECT_THROW(ill_conditioned_weights(tree, Treefix::rootfix, 0.5, 5), InputError);
}

} // namespace
