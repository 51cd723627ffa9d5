#include <treetrav/core/error.hpp>
#include <treetrav/traversal/strategies.hpp>

namespace treetrav {

HostStrategy parse_host_strategy(std::string const& name) {
  if (name == Recursive::name) return Recursive{};
  if (name == Autoropes::name) return Autoropes{};
  if (name == Lockstep::name) return Lockstep{};
  if (name == FsmLockstep::name) return FsmLockstep{};
  if (name == Hybrid::name) return Hybrid{};
  throw InputError("--strategy: unknown strategy '" + name + "' (known: recursive, autoropes, lockstep, fsm, hybrid)");
}

ApplicationStrategy parse_application_strategy(std::string const& name) {
  if (name == Regtt::name) return Regtt{};
  try {
    return std::visit([](auto tag) -> ApplicationStrategy { return tag; }, parse_host_strategy(name));
  } catch (InputError const&) {
    throw InputError("--strategy: unknown strategy '" + name +
                     "' (known: recursive, autoropes, lockstep, fsm, hybrid, regtt)");
  }
}

char const* to_string(RegttMode mode) { return mode == RegttMode::lockstep ? "lockstep" : "nonlockstep"; }

RegttMode parse_regtt_mode(std::string const& name) {
  if (name == "lockstep") return RegttMode::lockstep;
  if (name == "nonlockstep") return RegttMode::nonlockstep;
  throw InputError("--regtt-mode: unknown mode '" + name + "' (known: lockstep, nonlockstep)");
}

}  // namespace treetrav
