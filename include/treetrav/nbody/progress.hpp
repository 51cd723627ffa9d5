#pragma once

#include <Kokkos_Timer.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace treetrav::nbody {

// The progress line "step S/N (P%)  t = T  R steps/s  ETA E" of a run, and the
// run's log messages. On a terminal the line is rewritten in place (\r) a few
// times a second and the log is printed above it; otherwise it is a plain line
// every `interval_seconds`. A disabled Progress prints nothing (--quiet).
class Progress {
 public:
  Progress(std::FILE* stream, bool enabled, double interval_seconds);

  // The steps of this process: from `first_step` (already done) to `last_step`.
  void begin(std::int64_t first_step, std::int64_t last_step);
  // Step `step` is done; prints when the interval has passed.
  void update(std::int64_t step, double time);
  // Prints the line for `step` unconditionally and ends it.
  void finish(std::int64_t step, double time);
  void log(std::string const& message);

 private:
  std::string line(std::int64_t step, double time) const;
  void print(std::string const& text, bool final);

  std::FILE* stream_;
  bool enabled_;
  bool terminal_;
  double interval_;
  std::int64_t first_step_ = 0;
  std::int64_t last_step_ = 0;
  Kokkos::Timer clock_;
  double last_print_ = 0;
  bool line_open_ = false;  // a rewritable line is on the terminal
};

// "1h02m03s", "4m05s", "6.7s".
std::string format_duration(double seconds);

}  // namespace treetrav::nbody
