#include <treetrav/core/error.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <string>
#include <variant>

namespace treetrav {

HostStrategy parse_host_strategy(std::string const& name) {
  if (name == Recursive::name) return Recursive{};
  if (name == Autoropes::name) return Autoropes{};
  if (name == Lockstep::name) return Lockstep{};
  if (name == FsmLockstep::name) return FsmLockstep{};
  if (name == Hybrid::name) return Hybrid{};
  throw InputError("--strategy: unknown strategy '" + name + "' (known: recursive, autoropes, lockstep, fsm, hybrid)");
}

namespace {
// "recursive, autoropes, ...": every alternative of the variant (the pointer only names it).
template <class... Strategies>
std::string names_of(std::variant<Strategies...> const*) {
  std::string names;
  ((names += (names.empty() ? "" : ", ") + std::string(Strategies::name)), ...);
  return names;
}
}  // namespace

SearchStrategy parse_search_strategy(std::string const& name) {
  if (name == BruteForce::name) return BruteForce{};
  if (name == Automatic::name) return Automatic{};
  try {
    return std::visit([](auto tag) { return SearchStrategy(tag); }, parse_host_strategy(name));
  } catch (InputError const&) {
    throw InputError("--strategy: unknown strategy '" + name +
                     "' (known: " + names_of(static_cast<SearchStrategy const*>(nullptr)) + ")");
  }
}

}  // namespace treetrav
