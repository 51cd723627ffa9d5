#pragma once

#include <string>
#include <variant>

namespace treetrav {

// How each query walks the tree. A strategy is a tag; the driver has one
// overload per tag and every visitor runs under every strategy.

// Reference: plain recursion, one query per host thread (host spaces only).
struct Recursive {
  static constexpr char const* name = "recursive";
};

// Autoropes (Goldfarb et al.): the recursion replaced by an explicit stack of
// "ropes" (nodes still to visit); children are pushed in reverse visiting
// order, so pops follow the recursive order exactly.
struct Autoropes {
  static constexpr char const* name = "autoropes";
};

using HostStrategy = std::variant<Recursive, Autoropes>;

// Throws InputError naming the value when unknown.
HostStrategy parse_host_strategy(std::string const& name);

}  // namespace treetrav
