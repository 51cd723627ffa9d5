// treetrav.bh_accelerations: Barnes-Hut accelerations over the engine's Morton
// octree (built where the backend runs), by the group walk or a per-body walk.
#include "module.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/trees/octree.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <variant>

namespace treetrav::python {
namespace {

Multipole multipole_named(std::string const& name) {
  if (name == "monopole")
    return Multipole::monopole;
  if (name == "quadrupole")
    return Multipole::quadrupole;
  throw InputError("multipole", ": '" + name + "' (known: monopole, quadrupole)");
}

Opening opening_named(std::string const& name) {
  if (name == "barnes-hut")
    return Opening::barnes_hut;
  if (name == "com-offset")
    return Opening::com_offset;
  throw InputError("opening", ": '" + name + "' (known: barnes-hut, com-offset)");
}

template <class Distance, class Space, class MemorySpace>
Kokkos::View<Distance**, Kokkos::LayoutRight, MemorySpace>
caller_layout(Space const& space, Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> const& a) {
  Kokkos::View<Distance**, Kokkos::LayoutRight, MemorySpace> out(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::python::accelerations"),
      a.extent(0), 3);
  Kokkos::parallel_for(
      "treetrav::python::caller_layout", Kokkos::RangePolicy<Space>(space, 0, a.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        for (int k = 0; k < 3; ++k)
          out(i, k) = a(i, k);
      });
  return out;
}

nb::object bh_accelerations(Input positions, Input1 masses, double theta, double softening,
                            double gravity, std::string const& multipole, std::string const& opening,
                            int leaf_size, std::optional<std::string> const& strategy,
                            bool float64, std::string const& backend) {
  if (positions.shape(1) != 3)
    throw InputError("pos", ": bodies must be 3-dimensional (got shape (" +
                                std::to_string(positions.shape(0)) + ", " +
                                std::to_string(positions.shape(1)) + "))");
  if (masses.shape(0) != positions.shape(0))
    throw InputError("masses", ": " + std::to_string(masses.shape(0)) + " masses for " +
                                   std::to_string(positions.shape(0)) + " bodies");
  if (positions.shape(0) == 0)
    throw InputError("pos", ": no bodies");
  BarnesHutOptions options;
  options.theta = static_cast<Coordinate>(theta);
  options.softening = static_cast<Coordinate>(softening);
  options.gravity = static_cast<Coordinate>(gravity);
  options.multipole = multipole_named(multipole);
  options.opening = opening_named(opening);
  BarnesHutStrategy const walk =
      strategy ? parse_strategy<BarnesHutStrategy>(*strategy) : BarnesHutStrategy{GroupWalk{}};
  Raw const p = raw(positions), w = raw(masses);
  return to_python(on_engine([&] {
    return dispatch_backend(backend_named(backend), [&](auto space) {
      using Space = decltype(space);
      using MemorySpace = typename Space::memory_space;
      auto const bodies_source = source(space, p, "pos");
      auto const masses_source = source(space, w, "masses");
      check_finite(space, bodies_source, "pos");
      check_finite(space, masses_source, "masses");
      auto const bodies = rows_of(space, bodies_source, 0, bodies_source.rows);
      auto const mass_column = rows_of(space, masses_source, 0, masses_source.rows).coordinates;
      Kokkos::View<Coordinate const*, MemorySpace> body_masses(
          Kokkos::subview(mass_column, Kokkos::ALL, 0));
      auto const tree = build_morton_octree(space, bodies, body_masses, leaf_size,
                                            options.multipole == Multipole::quadrupole);
      Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations;
      std::visit(
          [&](auto tag) {
            using Strategy = decltype(tag);
            if constexpr (detail::compiled_barnes_hut_v<Space, MemorySpace, Strategy>)
              // The walks follow the tree's order of the bodies: neighbours in
              // space walk together (the group walk needs it).
              accelerations = barnes_hut_accelerations(space, tree, bodies, options, tag,
                                                       tree.points.original_index);
            else
              throw InputError("strategy", ": '" + std::string(Strategy::name) +
                                               "' is not a force walk compiled for backend " +
                                               Space::name());
          },
          walk);
      auto const out = float64 ? erase(caller_layout<double>(space, accelerations), !p.gpu)
                               : erase(caller_layout<float>(space, accelerations), !p.gpu);
      space.fence();
      return out;
    });
  }));
}

} // namespace

void bind_gravity(nb::module_& m) {
  using namespace nb::literals;
  m.def("bh_accelerations", &bh_accelerations, "pos"_a, "masses"_a, "theta"_a, "softening"_a,
        "G"_a, "multipole"_a, "opening"_a, "leaf_size"_a, "strategy"_a.none(), "float64"_a,
        "backend"_a);
}

} // namespace treetrav::python
