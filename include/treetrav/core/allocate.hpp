#pragma once

#include <Kokkos_Core.hpp>

namespace treetrav {

// A View allocated through its layout. Kokkos 3.4's constructor from
// extents reads the new allocation's label back for a rank check: on a GPU a
// blocking device-to-host copy for every allocation (five a Python kNN
// call); the constructor from a layout makes no such check. Allocations on
// a search's path go through here.
template <class View, class Properties, class... Extents>
View allocate_view(Properties const& properties, Extents... extents) {
  return View(properties, typename View::array_layout(static_cast<std::size_t>(extents)...));
}

} // namespace treetrav
