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

// The accelerations into the caller's (n, 3) array.
template <class T, class Space, class MemorySpace>
void write_accelerations(Space const& space,
                         Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> const& a,
                         RawOut<T> const& raw) {
  auto const d = destination(space, raw);
  auto const out = d.view;
  Kokkos::parallel_for(
      "treetrav::python::write_accelerations", Kokkos::RangePolicy<Space>(space, 0, a.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        for (int k = 0; k < 3; ++k)
          out(i, k) = a(i, k);
      });
  d.finish(space);
  space.fence();
}

void bh_accelerations(Input positions, Input1 masses, double theta, double softening,
                      double gravity, std::string const& multipole, std::string const& opening,
                      double alpha, int leaf_size, std::optional<std::string> const& strategy,
                      std::string const& backend, nb::ndarray<> accelerations) {
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
  options.multipole = parse_multipole(multipole);
  options.opening = parse_opening(opening);
  options.alpha = static_cast<Coordinate>(alpha);
  BarnesHutStrategy const walk =
      strategy ? parse_strategy<BarnesHutStrategy>(*strategy) : BarnesHutStrategy{GroupWalk{}};
  Raw const p = raw(positions), w = raw(masses);
  std::int64_t const n = p.rows;
  std::variant<RawOut<float>, RawOut<double>> out;
  if (accelerations.dtype() == nb::dtype<double>())
    out = raw_out<double>(nb::ndarray<double>(accelerations), n, 3, "accelerations");
  else if (accelerations.dtype() == nb::dtype<float>())
    out = raw_out<float>(nb::ndarray<float>(accelerations), n, 3, "accelerations");
  else
    throw InputError("accelerations", ": float32 or float64 outputs only");
  on_engine([&] {
    dispatch_backend(backend_named(backend), [&](auto space) {
      using Space = decltype(space);
      using MemorySpace = typename Space::memory_space;
      // The sources stay alive: a set in the engine's layout views their
      // memory (a host array's copy on the GPU).
      auto const body_source = source(space, p, "pos");
      auto const mass_source = source(space, w, "masses");
      auto const bodies = checked_rows(space, body_source, "pos");
      auto const mass_column = checked_rows(space, mass_source, "masses").coordinates;
      Kokkos::View<Coordinate const*, MemorySpace> body_masses(
          Kokkos::subview(mass_column, Kokkos::ALL, 0));
      auto const tree = build_morton_octree(space, bodies, body_masses, leaf_size,
                                            options.multipole == Multipole::quadrupole);
      std::visit(
          [&](auto tag) {
            using Strategy = decltype(tag);
            if constexpr (detail::compiled_barnes_hut_v<Space, MemorySpace, Strategy>) {
              // The walks follow the tree's order of the bodies: neighbours in
              // space walk together (the group walk needs it).
              auto const a = barnes_hut_accelerations(space, tree, bodies, options, tag,
                                                      tree.points.original_index);
              std::visit([&](auto const& o) { write_accelerations(space, a, o); }, out);
            } else {
              throw InputError("strategy", ": '" + std::string(Strategy::name) +
                                               "' is not a force walk compiled for backend " +
                                               Space::name());
            }
          },
          walk);
    });
  });
}

} // namespace

void bind_gravity(nb::module_& m) {
  using namespace nb::literals;
  m.def("bh_accelerations", &bh_accelerations, "pos"_a, "masses"_a, "theta"_a, "softening"_a,
        "G"_a, "multipole"_a, "opening"_a, "alpha"_a, "leaf_size"_a, "strategy"_a.none(), "backend"_a,
        "accelerations"_a.noconvert());
}

} // namespace treetrav::python
