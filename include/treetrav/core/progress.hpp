#pragma once

#include <Kokkos_Timer.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace treetrav {

// The progress line "<unit> D/N (P%)  <detail>  R <units>/s  ETA E" of a long
// job (an N-body run's steps, a batch search's queries) and the job's log
// messages. On a terminal the line carries a bar, is rewritten in place (\r)
// a few times a second and the log is printed above it; otherwise it is a
// plain line every `interval_seconds`. A disabled Progress prints nothing.
class Progress {
 public:
  Progress(std::FILE* stream, bool enabled, double interval_seconds, std::string unit = "step",
           std::string units = "steps");

  // The units of this process: from `first` (already done) to `last`.
  void begin(std::int64_t first, std::int64_t last);
  // Unit `done` is done; prints when the interval has passed. `detail`
  // ("t = 1.5", say) follows the percentage.
  void update(std::int64_t done, std::string const& detail = {});
  // Prints the line for `done` unconditionally and ends it.
  void finish(std::int64_t done, std::string const& detail = {});
  void log(std::string const& message);
  bool enabled() const { return enabled_; }

 private:
  std::string line(std::int64_t done, std::string const& detail) const;
  void print(std::string const& text, bool final);

  std::FILE* stream_;
  bool enabled_;
  bool terminal_;
  double interval_;
  std::string unit_, units_;
  std::int64_t first_ = 0;
  std::int64_t last_ = 0;
  Kokkos::Timer clock_;
  double last_print_ = 0;
  bool line_open_ = false;  // a rewritable line is on the terminal
};

// "1h02m03s", "4m05s", "6.7s".
std::string format_duration(double seconds);

}  // namespace treetrav
