#pragma once

#include <map>
#include <string>
#include <utility>

namespace treetrav::io {

// Run metadata stored as HDF5 attributes (strategy, backend, timings, ...).
struct Metadata {
  std::map<std::string, std::string> text;
  std::map<std::string, double> numbers;

  Metadata& set(std::string const& key, std::string value) {
    text[key] = std::move(value);
    return *this;
  }
  Metadata& set(std::string const& key, double value) {
    numbers[key] = value;
    return *this;
  }
};

}  // namespace treetrav::io
