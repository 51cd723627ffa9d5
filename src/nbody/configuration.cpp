#include <treetrav/nbody/configuration.hpp>

#include "required_attributes.hpp"

namespace treetrav::nbody {

io::Metadata to_metadata(Configuration const& configuration) {
  io::Metadata metadata;
  metadata.set("dt", configuration.dt)
      .set("theta", static_cast<double>(configuration.forces.theta))
      .set("softening", static_cast<double>(configuration.forces.softening))
      .set("gravity", static_cast<double>(configuration.forces.gravity))
      .set("multipole", to_string(configuration.forces.multipole))
      .set("opening", to_string(configuration.forces.opening))
      .set("alpha", static_cast<double>(configuration.forces.alpha))
      .set("leaf_size", static_cast<double>(configuration.leaf_size))
      .set("refit", configuration.refit)
      .set("potential_theta", static_cast<double>(configuration.potential_theta))
      .set("group_size", static_cast<double>(configuration.group_size))
      .set("eta", configuration.eta)
      .set("max_bin", static_cast<double>(configuration.max_bin))
      .set("initial_conditions", configuration.initial_conditions)
      .set("initial_time", configuration.initial_time)
      .set("bodies", static_cast<double>(configuration.bodies));
  return metadata;
}

Configuration configuration_from_metadata(io::Metadata const& metadata, std::string const& source) {
  auto number = [&](char const* key) { return detail::required_number(metadata, key, source); };
  Configuration configuration;
  configuration.dt = number("dt");
  // Stored from floats, so the casts back are exact.
  configuration.forces.theta = static_cast<Coordinate>(number("theta"));
  configuration.forces.softening = static_cast<Coordinate>(number("softening"));
  configuration.forces.gravity = static_cast<Coordinate>(number("gravity"));
  configuration.forces.multipole = parse_multipole(detail::required_text(metadata, "multipole", source));
  configuration.forces.opening = parse_opening(detail::required_text(metadata, "opening", source));
  // Runs from before the relative criterion stored no alpha, and need none.
  if (configuration.forces.opening == Opening::relative || metadata.numbers.count("alpha") != 0)
    configuration.forces.alpha = static_cast<Coordinate>(number("alpha"));
  configuration.leaf_size = static_cast<int>(number("leaf_size"));
  // Runs from before refits stored none, and built every octree anew.
  if (metadata.numbers.count("refit") != 0) configuration.refit = number("refit");
  configuration.potential_theta = static_cast<Coordinate>(number("potential_theta"));
  configuration.group_size = static_cast<int>(number("group_size"));
  configuration.eta = number("eta");
  configuration.max_bin = static_cast<int>(number("max_bin"));
  configuration.initial_conditions = detail::required_text(metadata, "initial_conditions", source);
  configuration.initial_time = number("initial_time");
  configuration.bodies = static_cast<std::int64_t>(number("bodies"));
  return configuration;
}

}  // namespace treetrav::nbody
