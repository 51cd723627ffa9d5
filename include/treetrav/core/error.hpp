#pragma once

#include <stdexcept>
#include <string>

namespace treetrav {

// Bad input: a file, dataset or argument the user can fix. The message names
// it in the library's words: a file by its path, an argument by its
// parameter (the field of the options it came in: "k", "radius",
// "leaf_size", "strategy", ...), its value and what is accepted. A front end
// that calls the parameter something else (the CLI: a flag) renames it
// through parameter() and detail().
class InputError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;

  // About one argument: the message is `parameter` followed by `detail`
  // ("k" and " 9 exceeds the 8 reference points available").
  InputError(std::string parameter, std::string const& detail)
      : std::runtime_error(parameter + detail), parameter_(std::move(parameter)) {}

  // The argument the error is about; empty when it is about no one argument.
  std::string const& parameter() const noexcept { return parameter_; }
  // The message after the parameter's name.
  std::string detail() const { return std::string(what()).substr(parameter_.size()); }

private:
  std::string parameter_;
};

} // namespace treetrav
