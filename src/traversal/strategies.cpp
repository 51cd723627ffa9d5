#include <treetrav/core/error.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace treetrav {

namespace {

// The tag of `Strategies` called `name`; the error lists the names it knows.
template <class Strategies, std::size_t... alternative>
Strategies parse_strategy(std::string const& name, std::index_sequence<alternative...>) {
  std::optional<Strategies> strategy;
  std::string known;
  auto const consider = [&](auto tag) {
    known += (known.empty() ? "" : ", ") + std::string(decltype(tag)::name);
    if (!strategy && name == decltype(tag)::name)
      strategy = tag;
  };
  (consider(std::variant_alternative_t<alternative, Strategies>{}), ...);
  if (!strategy)
    throw InputError("--strategy: unknown strategy '" + name + "' (known: " + known + ")");
  return *strategy;
}

template <class Strategies>
Strategies parse_strategy(std::string const& name) {
  return parse_strategy<Strategies>(name,
                                    std::make_index_sequence<std::variant_size_v<Strategies>>{});
}

} // namespace

HostStrategy parse_host_strategy(std::string const& name) {
  return parse_strategy<HostStrategy>(name);
}

ApplicationStrategy parse_application_strategy(std::string const& name) {
  return parse_strategy<ApplicationStrategy>(name);
}

ForceStrategy parse_force_strategy(std::string const& name) {
  return parse_strategy<ForceStrategy>(name);
}

BarnesHutStrategy parse_barnes_hut_strategy(std::string const& name) {
  return parse_strategy<BarnesHutStrategy>(name);
}

SearchStrategy parse_search_strategy(std::string const& name) {
  return parse_strategy<SearchStrategy>(name);
}

char const* to_string(RegttMode mode) {
  return mode == RegttMode::lockstep ? "lockstep" : "nonlockstep";
}

RegttMode parse_regtt_mode(std::string const& name) {
  if (name == "lockstep")
    return RegttMode::lockstep;
  if (name == "nonlockstep")
    return RegttMode::nonlockstep;
  throw InputError("--regtt-mode: unknown mode '" + name + "' (known: lockstep, nonlockstep)");
}

} // namespace treetrav
