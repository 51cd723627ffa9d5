#include <treetrav/nbody/progress.hpp>

#include <fmt/core.h>

#include <unistd.h>

#include <cmath>

namespace treetrav::nbody {
namespace {

constexpr double terminal_interval = 0.25;  // seconds between rewrites of the line

}  // namespace

Progress::Progress(std::FILE* stream, bool enabled, double interval_seconds)
    : stream_(stream), enabled_(enabled), terminal_(isatty(fileno(stream)) != 0), interval_(interval_seconds) {}

void Progress::begin(std::int64_t first_step, std::int64_t last_step) {
  first_step_ = first_step;
  last_step_ = last_step;
  clock_.reset();
  last_print_ = 0;
}

void Progress::update(std::int64_t step, double time) {
  if (!enabled_) return;
  double const now = clock_.seconds();
  if (now - last_print_ < (terminal_ ? terminal_interval : interval_)) return;
  last_print_ = now;
  print(line(step, time), false);
}

void Progress::finish(std::int64_t step, double time) {
  if (enabled_) print(line(step, time), true);
}

void Progress::log(std::string const& message) {
  if (!enabled_) return;
  // Over the rewritable line: clear it, print, and let the next update redraw it.
  fmt::print(stream_, "{}{}\n", line_open_ ? "\r\033[K" : "", message);
  line_open_ = false;
  std::fflush(stream_);
}

std::string Progress::line(std::int64_t step, double time) const {
  std::int64_t const total = last_step_ - first_step_, done = step - first_step_;
  double const elapsed = clock_.seconds();
  double const rate = elapsed > 0 ? done / elapsed : 0;
  std::string text = fmt::format("step {}/{} ({:.1f}%)  t = {:.6g}", step, last_step_,
                                 total > 0 ? 100.0 * done / total : 100.0, time);
  if (done > 0) text += fmt::format("  {:.3g} steps/s  ETA {}", rate, format_duration((last_step_ - step) / rate));
  return text;
}

void Progress::print(std::string const& text, bool final) {
  if (terminal_) {
    fmt::print(stream_, "\r\033[K{}{}", text, final ? "\n" : "");
    line_open_ = !final;
  } else {
    fmt::print(stream_, "{}\n", text);
  }
  std::fflush(stream_);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  auto const whole = static_cast<long long>(seconds + 0.5);
  if (whole < 3600) return fmt::format("{}m{:02d}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02d}m{:02d}s", whole / 3600, whole / 60 % 60, whole % 60);
}

}  // namespace treetrav::nbody
