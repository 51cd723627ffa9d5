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

}  // namespace treetrav
