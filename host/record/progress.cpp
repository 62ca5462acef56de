#include "record/progress.h"

#include <algorithm>
#include <cmath>

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

namespace slender {
namespace {

constexpr double kQuietSeconds = 2.0;    // runs shorter than this print nothing
constexpr double kTtyInterval = 0.1;     // between rewrites of a terminal line [s]
constexpr double kPlainInterval = 10.0;  // between plain lines in a log [s]

bool stderr_is_tty() {
#if defined(_WIN32)
  return _isatty(_fileno(stderr)) != 0;
#else
  return isatty(fileno(stderr)) != 0;
#endif
}

// enough decimals to see the time move: 2 for totals of 1 s and more, more for short runs
int time_decimals(Real total) {
  if (!(total > 0) || total >= 1) return 2;
  const int d = 2 - int(std::floor(std::log10(total)));
  return std::min(d, 9);
}

}  // namespace

std::string format_duration(double seconds) {
  char buf[64];
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds >= 1e9) {  // beyond 30 years, and beyond what lround holds for large values
    std::snprintf(buf, sizeof buf, "%.3g h", seconds / 3600);
    return buf;
  }
  const long s = std::lround(seconds);
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%ld s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

std::string format_progress(
    Real sim_time, Real total_time, long steps, double wall_seconds, bool bar, int bar_width) {
  const Real frac = total_time > 0 ? clamp(sim_time / total_time, 0, 1) : Real(1);
  std::string line;
  if (bar) {
    const int filled = std::min(bar_width, int(std::floor(frac * bar_width)));
    line = "[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "]  ";
  }

  char buf[160];
  const int d = time_decimals(total_time);
  std::snprintf(buf, sizeof buf, "t = %.*f / %.*f s  (%d%%)", d, sim_time, d, total_time,
                int(std::floor(100 * frac)));
  line += buf;

  // rate and time left, once there is something to measure
  if (wall_seconds > 0) {
    const double rate = steps / wall_seconds;
    std::snprintf(buf, sizeof buf, rate < 10 ? "  %.1f steps/s" : "  %.0f steps/s", rate);
    line += buf;
  }
  if (frac >= 1) {
    line += "  ETA 0 s";
  } else if (frac > 0 && wall_seconds > 0) {
    line += "  ETA " + format_duration(wall_seconds * (1 - frac) / frac);
  } else {
    line += "  ETA ?";
  }
  return line;
}

Progress::Progress() : Progress(stderr, stderr_is_tty()) {}

Progress::Progress(std::FILE* out, bool tty) : out_(out), tty_(tty) {}

void Progress::start(Real total_sim_time) {
  total_ = total_sim_time;
  sim_time_ = 0;
  steps_ = 0;
  wall_ = 0;
  last_print_ = -1;
  last_len_ = 0;
  printed_ = false;
  line_open_ = false;
  t0_ = std::chrono::steady_clock::now();
}

void Progress::update(Real sim_time, long steps) {
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0_;
  update_at(sim_time, steps, wall.count());
}

void Progress::update_at(Real sim_time, long steps, double wall_seconds) {
  sim_time_ = sim_time;
  steps_ = steps;
  wall_ = wall_seconds;
  if (wall_seconds < kQuietSeconds) return;
  const double interval = tty_ ? kTtyInterval : kPlainInterval;
  if (last_print_ >= 0 && wall_seconds - last_print_ < interval) return;
  print(wall_seconds);
}

void Progress::finish() {
  // a terminal line shows the final state before it is closed; plain lines are complete
  if (!line_open_) return;
  print(wall_);
  std::fputc('\n', out_);
  std::fflush(out_);
  line_open_ = false;
}

void Progress::print(double wall_seconds) {
  const std::string line = format_progress(sim_time_, total_, steps_, wall_seconds, tty_);
  if (tty_) {
    // pad with spaces so that a shorter line hides the end of the previous one
    const size_t pad = last_len_ > line.size() ? last_len_ - line.size() : 0;
    std::fprintf(out_, "\r%s%*s", line.c_str(), int(pad), "");
    last_len_ = line.size();
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
  last_print_ = wall_seconds;
  printed_ = true;
}

}  // namespace slender
