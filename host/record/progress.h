#pragma once

// Progress bar of a run on stderr. Short runs stay silent: nothing is printed before the run has
// lasted about 2 s of wall time. On a terminal one line is rewritten with '\r' at most 10 times a
// second; elsewhere (CI logs) a plain line is printed at most every 10 s.

#include <chrono>
#include <cstdio>
#include <string>

#include "slender/core/hd.h"

namespace slender {

/// One progress line, e.g.
/// `[#######.....]  t = 0.50 / 1.00 s  (50%)  1234 steps/s  ETA 3 s`; without the bar when
/// `bar` is false. `wall_seconds` is the wall time since the start of the run.
std::string format_progress(
    Real sim_time, Real total_time, long steps, double wall_seconds, bool bar, int bar_width = 30);

/// A duration for humans: "3 s", "2 min 05 s", "1 h 03 min".
std::string format_duration(double seconds);

class Progress {
 public:
  /// writes to stderr; terminal or not is asked of stderr
  Progress();
  /// writes to `out`, which is treated as a terminal when `tty` is true
  Progress(std::FILE* out, bool tty);

  void start(Real total_sim_time);
  /// reports the run's state; prints only when it is time to
  void update(Real sim_time, long steps);
  /// same, at a given wall time since start() [s] (for tests)
  void update_at(Real sim_time, long steps, double wall_seconds);
  /// ends the line if anything was printed
  void finish();

  /// whether anything has been printed since start()
  bool printed() const { return printed_; }

 private:
  void print(double wall_seconds);

  std::FILE* out_;
  bool tty_;
  Real total_ = 0;
  Real sim_time_ = 0;
  long steps_ = 0;
  double wall_ = 0;         // wall time of the last update [s]
  double last_print_ = -1;  // wall time of the last print [s], -1 before the first
  size_t last_len_ = 0;     // length of the last line written on a terminal
  bool printed_ = false;
  bool line_open_ = false;  // a terminal line that finish() must end
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace slender
