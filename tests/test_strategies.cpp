// The list of strategies and what callers ask of them: the variants filtered
// from the one list by traits, parsing by name with errors in the library's
// words, the caller's Workspace.
#include "strategies/reversed.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/core/workspace.hpp>

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace treetrav {
namespace {

// The name of the strategy a variant holds.
template <class Variant>
std::string name_of(Variant const& strategy) {
  return std::visit([](auto const& s) { return std::string(std::decay_t<decltype(s)>::name); },
                    strategy);
}

TEST(Strategies, VariantsAreFilteredFromTheListByTraits) {
  // Searches: every strategy but the group walk, brute force and auto included.
  EXPECT_EQ(strategy_names<SearchStrategy>(),
            "recursive, autoropes, lockstep, fsm, hybrid, regtt, brute, auto");
  // Per-query tree walks (radius lists, distributed searches).
  EXPECT_EQ(strategy_names<ApplicationStrategy>(),
            "recursive, autoropes, lockstep, fsm, hybrid, regtt");
  // Barnes-Hut: every tree walk.
  EXPECT_EQ(strategy_names<BarnesHutStrategy>(),
            "recursive, autoropes, lockstep, fsm, hybrid, regtt, group");
  // N-body restarts switch only between walks with the same forces bit for bit.
  EXPECT_EQ(strategy_names<ForceStrategy>(), "recursive, autoropes, lockstep, fsm, hybrid, group");
}

// A list of one's own (the tests' strategy beside the library's) filters the same way.
TEST(Strategies, AListOfOnesOwnTakesANewStrategy) {
  using Mine = type_list<Autoropes, test::Reversed, GroupWalk>;
  using Walks = strategies_where<detail::keeps_per_query_walk, Mine>;
  EXPECT_EQ(strategy_names<Walks>(), "autoropes, reversed");
  EXPECT_EQ(name_of(parse_strategy<Walks>("reversed")), "reversed");
}

TEST(Strategies, ParsingNamesTheParameterAndWhatIsAccepted) {
  EXPECT_EQ(name_of(parse_strategy<SearchStrategy>("regtt")), "regtt");
  try {
    parse_strategy<ForceStrategy>("regtt");
    ADD_FAILURE() << "regtt is no N-body strategy";
  } catch (InputError const& e) {
    EXPECT_EQ(e.parameter(), "strategy");
    EXPECT_EQ(std::string(e.what()),
              "strategy: unknown strategy 'regtt' (known: recursive, autoropes, lockstep, fsm, "
              "hybrid, group)");
    EXPECT_EQ(e.detail(), ": unknown strategy 'regtt' (known: recursive, autoropes, lockstep, "
                          "fsm, hybrid, group)");
  }
}

TEST(Strategies, TraitsAnswerAtRunTime) {
  SearchStrategy const brute = BruteForce{};
  SearchStrategy const regtt = Regtt{};
  auto const walks = [](auto s) { return decltype(s)::walks_tree; };
  EXPECT_FALSE(trait_of(brute, walks));
  EXPECT_TRUE(trait_of(regtt, walks));
  Regtt lockstep;
  lockstep.mode = RegttMode::lockstep;
  EXPECT_FALSE(Regtt{}.records_metrics());
  EXPECT_TRUE(lockstep.records_metrics());
}

struct Counted {
  int value = 7;
};

TEST(Workspace, KeepsOnePartPerTypeUntilForgotten) {
  Workspace workspace;
  workspace.get<Counted>().value = 3;
  EXPECT_EQ(workspace.get<Counted>().value, 3); // the same part
  workspace.get<int>() = 5;
  EXPECT_EQ(workspace.get<Counted>().value, 3);
  workspace.forget<Counted>();
  EXPECT_EQ(workspace.get<Counted>().value, 7); // made anew
  EXPECT_EQ(workspace.get<int>(), 5);
  workspace.clear();
  EXPECT_EQ(workspace.get<int>(), 0);
}

TEST(InputError, WithoutAParameterIsAboutNoOneArgument) {
  InputError const error("points.h5: no dataset /Points");
  EXPECT_EQ(error.parameter(), "");
  EXPECT_EQ(error.detail(), "points.h5: no dataset /Points");
}

} // namespace
} // namespace treetrav
