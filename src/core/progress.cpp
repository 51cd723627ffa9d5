#include <treetrav/core/progress.hpp>

#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace treetrav {
namespace {

constexpr double terminal_interval = 0.25;  // seconds between rewrites of the line
constexpr int bar_width = 30;

// "[#########.....................]" for `fraction` of the work.
std::string bar(double fraction) {
  int const filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * bar_width));
  return "[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "]";
}

}  // namespace

Progress::Progress(std::FILE* stream, bool enabled, double interval_seconds, std::string unit,
                   std::string units)
    : stream_(stream),
      enabled_(enabled),
      terminal_(isatty(fileno(stream)) != 0),
      interval_(interval_seconds),
      unit_(std::move(unit)),
      units_(std::move(units)) {}

void Progress::begin(std::int64_t first, std::int64_t last) {
  first_ = first;
  last_ = last;
  clock_.reset();
  last_print_ = 0;
}

void Progress::update(std::int64_t done, std::string const& detail) {
  if (!enabled_) return;
  double const now = clock_.seconds();
  if (now - last_print_ < (terminal_ ? terminal_interval : interval_)) return;
  last_print_ = now;
  print(line(done, detail), false);
}

void Progress::finish(std::int64_t done, std::string const& detail) {
  if (enabled_) print(line(done, detail), true);
}

void Progress::log(std::string const& message) {
  if (!enabled_) return;
  // Over the rewritable line: clear it, print, and let the next update redraw it.
  fmt::print(stream_, "{}{}\n", line_open_ ? "\r\033[K" : "", message);
  line_open_ = false;
  std::fflush(stream_);
}

std::string Progress::line(std::int64_t at, std::string const& detail) const {
  std::int64_t const total = last_ - first_, done = at - first_;
  double const fraction = total > 0 ? static_cast<double>(done) / total : 1.0;
  double const elapsed = clock_.seconds();
  double const rate = elapsed > 0 ? done / elapsed : 0;
  std::string text = fmt::format("{} {}/{} {}({:.1f}%)", unit_, at, last_,
                                 terminal_ ? bar(fraction) + " " : "", 100.0 * fraction);
  if (!detail.empty()) text += "  " + detail;
  if (done > 0)
    text += fmt::format("  {:.3g} {}/s  ETA {}", rate, units_, format_duration((last_ - at) / rate));
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

}  // namespace treetrav
