#pragma once

// Helpers shared by the benchmark programs: number formatting, the machine's description,
// tables printed as aligned text or markdown, and command-line options, lists and sizes.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "slender/simulator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace slender::bench {

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// the program's command line as typed, for the results files
inline std::string command_line(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i)
    command += (i ? " " : "") + std::string(argv[i]);
  return command;
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 10, "model name") == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t b = line.find_first_not_of(" \t", colon + 1);
        return b == std::string::npos ? "" : line.substr(b);
      }
    }
  }
  return "unknown";
}

inline int omp_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};

inline void print_text(std::ostream& os, const Table& t) {
  std::vector<size_t> w(t.head.size());
  for (size_t j = 0; j < w.size(); ++j)
    w[j] = t.head[j].size();
  for (const auto& row : t.rows) {
    for (size_t j = 0; j < w.size(); ++j)
      w[j] = std::max(w[j], row[j].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t j = 0; j < w.size(); ++j) {
      os << cells[j];
      if (j + 1 < w.size()) os << std::string(w[j] - cells[j].size() + 2, ' ');
    }
    os << '\n';
  };
  line(t.head);
  size_t total = 0;
  for (size_t j = 0; j < w.size(); ++j)
    total += w[j] + (j + 1 < w.size() ? 2 : 0);
  os << std::string(total, '-') << '\n';
  for (const auto& row : t.rows)
    line(row);
}

inline void print_markdown(std::ostream& os, const Table& t) {
  auto line = [&](const std::vector<std::string>& cells) {
    os << '|';
    for (const std::string& c : cells)
      os << ' ' << c << " |";
    os << '\n';
  };
  line(t.head);
  os << '|';
  for (size_t j = 0; j < t.head.size(); ++j)
    os << " --- |";
  os << '\n';
  for (const auto& row : t.rows)
    line(row);
}

/// the 1, 5 and 15 minute load averages, as /proc/loadavg gives them
inline std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return a + " " + b + " " + c;
}

/// the lines every results file starts with: the processor, its logical cores, the OpenMP
/// threads, the load average at start and the kind of build
inline std::string machine_head() {
  std::ostringstream os;
  os << "machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
     << " logical cores; OpenMP threads: " << omp_threads()
     << "; load average at start (1, 5, 15 min): " << loadavg() << "\n";
#ifdef NDEBUG
  os << "build: optimized (NDEBUG)\n";
#else
  os << "build: debug (assertions on) - timings are not representative\n";
#endif
  return os.str();
}

/// a markdown results file begun with the command and each line of `head` as a bullet list;
/// when it cannot be written, a message naming the program and the file, and a stream that
/// tests false
inline std::ofstream open_markdown(const std::string& path,
                                   const std::string& program,
                                   const std::string& command,
                                   const std::string& head) {
  std::ofstream md(path);
  if (!md) {
    std::cerr << program << ": cannot write " << path << '\n';
    return md;
  }
  md << "- command: `" << command << "`\n";
  std::istringstream hs(head);
  std::string l;
  while (std::getline(hs, l))
    md << "- " << l << '\n';
  return md;
}

/// true when everything written to a results file reached it; else a message naming the file
inline bool close_markdown(std::ofstream& md, const std::string& path, const std::string& program) {
  md.close();
  if (md) return true;
  std::cerr << program << ": error writing " << path << '\n';
  return false;
}

/// the items of a comma-separated list, blanks dropped ("2k, 20k" -> {"2k", "20k"})
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (ch != ' ') {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

/// a positive count with an optional k (1e3) or m (1e6) suffix: "2k" -> 2000
inline long parse_size(const std::string& s) {
  if (s.empty()) throw std::runtime_error("empty size");
  double mult = 1;
  std::string num = s;
  const char last = char(std::tolower(static_cast<unsigned char>(s.back())));
  if (last == 'k') {
    mult = 1e3;
    num.pop_back();
  } else if (last == 'm') {
    mult = 1e6;
    num.pop_back();
  }
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (end == num.c_str() || *end != '\0' || !(v > 0))
    throw std::runtime_error("bad size '" + s + "' (e.g. 2k, 20000)");
  return long(std::llround(v * mult));
}

/// The argument of option argv[i] (i moves past it); an error naming the option when the
/// command line ends first.
inline std::string option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw std::runtime_error(std::string(argv[i]) + " needs a value");
  return argv[++i];
}

/// The argument of option argv[i] as a finite number (i moves past it).
inline double option_number(int argc, char** argv, int& i) {
  const std::string name = argv[i], v = option_value(argc, argv, i);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !std::isfinite(x))
    throw std::runtime_error(name + ": not a number '" + v + "'");
  return x;
}

/// The argument of option argv[i] as a positive count, with parse_size's suffixes (i moves past
/// it).
inline int option_count(int argc, char** argv, int& i) {
  const std::string name = argv[i], v = option_value(argc, argv, i);
  long n = 0;
  try {
    n = parse_size(v);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(name + ": " + e.what());
  }
  if (n > 1000000000L) throw std::runtime_error(name + ": too large '" + v + "'");
  return int(n);
}

/// --solver auto|cholmod|eigen-ldlt|sparse-lu|pcg|banded
inline LinearSolverKind parse_solver(const std::string& name) {
  LinearSolverKind kind;
  if (!linear_solver_from_name(name, kind))
    throw std::runtime_error("unknown --solver '" + name + "' (" + linear_solver_names() + ")");
  return kind;
}

/// --backend cpu|cuda
inline BackendKind parse_backend(const std::string& name) {
  BackendKind kind;
  if (!backend_from_name(name, kind))
    throw std::runtime_error("unknown --backend '" + name + "' (cpu or cuda)");
  return kind;
}

/// S8's actions at time t (bench/batch_bench.cpp, bench/executor_counts_bench.cpp): every
/// environment its own travelling curvature wave on the 0.5 m snake of nnode nodes and nb bend
/// stencils, amplitudes 10-15 1/m, the learned wavelength (0.53 m) and frequency (1.9 Hz); the
/// second natural curvature of each stencil in kappa (2 nb per environment)
inline void snake_wave(std::vector<double>& kappa, int nenv, int nb, int nnode, double t) {
  const double dl = 0.5 / std::max(1, nnode - 1);
  for (int e = 0; e < nenv; ++e) {
    const double amp = 10 + 5.0 * e / std::max(1, nenv - 1);
    for (int j = 0; j < nb; ++j) {
      const double s = (j + 1) * dl;
      kappa[(size_t(e) * nb + j) * 2 + 1] = amp * dl * std::sin(2 * M_PI * (s / 0.53 + 1.9 * t));
    }
  }
}

}  // namespace slender::bench
