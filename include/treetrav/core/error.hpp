#pragma once

#include <stdexcept>
#include <string>

namespace treetrav {

// Bad input: a file, dataset or argument the user can fix. The message names it.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace treetrav
