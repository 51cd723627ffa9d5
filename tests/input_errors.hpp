#pragma once

#include <treetrav/core/error.hpp>

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace treetrav::test {

// Runs `call`, expects InputError, and checks that its message names `subject`
// (a file, an option, a value) and every one of `names` (datasets, row
// numbers, ...). Returns the message.
inline std::string expect_input_error(std::function<void()> const& call, std::string const& subject,
                                      std::vector<std::string> const& names = {}) {
  try {
    call();
  } catch (InputError const& error) {
    std::string const message = error.what();
    EXPECT_NE(message.find(subject), std::string::npos) << message;
    for (auto const& name : names)
      EXPECT_NE(message.find(name), std::string::npos) << message;
    return message;
  } catch (std::exception const& error) {
    ADD_FAILURE() << "expected InputError, got: " << error.what();
    return {};
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return {};
}

} // namespace treetrav::test
