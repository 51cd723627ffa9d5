#pragma once

// Reading back what the nbody writers stored as attributes: a missing one is
// an InputError naming the file.
#include <treetrav/core/error.hpp>
#include <treetrav/io/metadata.hpp>

#include <string>

namespace treetrav::nbody::detail {

inline double required_number(io::Metadata const& metadata, std::string const& key, std::string const& source) {
  auto const found = metadata.numbers.find(key);
  if (found == metadata.numbers.end()) throw InputError(source + ": numeric attribute \"" + key + "\" is missing");
  return found->second;
}

inline std::string required_text(io::Metadata const& metadata, std::string const& key, std::string const& source) {
  auto const found = metadata.text.find(key);
  if (found == metadata.text.end()) throw InputError(source + ": text attribute \"" + key + "\" is missing");
  return found->second;
}

}  // namespace treetrav::nbody::detail
