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

ForceStrategy parse_force_strategy(std::string const& name) {
  if (name == GroupWalk::name) return GroupWalk{};
  if (name != Recursive::name && name != Autoropes::name && name != Lockstep::name && name != FsmLockstep::name &&
      name != Hybrid::name)
    throw InputError("--strategy: unknown strategy '" + name +
                     "' (known: recursive, autoropes, lockstep, fsm, hybrid, group)");
  return std::visit([](auto tag) -> ForceStrategy { return tag; }, parse_host_strategy(name));
}

}  // namespace treetrav
