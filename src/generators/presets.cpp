#include <treetrav/generators/generators.hpp>

namespace treetrav::generators {

// Shapes chosen to mimic the papers' real inputs in the unit cube: Covtype's
// many uneven clumps, MNIST's ten broad digit classes, Geocity's dense towns.
std::vector<Preset> const& presets() {
  static std::vector<Preset> const table{
      {"covtype7", 7, 100, 0.05, "7-D, 100 clusters of differing widths (stand-in for Covtype)"},
      {"mnist7", 7, 10, 0.15, "7-D, 10 broad clusters (stand-in for MNIST reduced to 7 dims)"},
      {"geocity2", 2, 1000, 0.004,
       "2-D, 1000 tight clusters of uneven weight (stand-in for Geocity city locations)"},
  };
  return table;
}

namespace detail {

Preset const& find_preset(std::string const& name) {
  std::string known;
  for (Preset const& preset : presets()) {
    if (preset.name == name) return preset;
    known += (known.empty() ? "" : ", ") + preset.name;
  }
  throw InputError("unknown preset '" + name + "' (known: " + known + ")");
}

}  // namespace detail
}  // namespace treetrav::generators
