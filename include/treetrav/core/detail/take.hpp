#pragma once

#include <utility>

namespace treetrav::detail {

// `value` handed over, the caller's left empty (default-constructed).
// std::move alone does not let go of a Kokkos View: Kokkos 3.4's View has no
// move constructor (its tracker is copied), so a moved-from View, and every
// struct of them, still holds its memory.
template <class T>
T take(T& value) {
  T taken = std::move(value);
  value = T{};
  return taken;
}

} // namespace treetrav::detail
