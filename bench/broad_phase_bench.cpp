// slender_broad_phase_bench: the contact broad phase (host/contact/broad_phase.h) on generated
// geometry of 1e3 to 1e6 elements.
//
// Cases (edge length l = 1 cm throughout):
// - rods:  a soup of random rods, 50 edges each (a persistent random walk that reflects off the
//          walls), radius 1 mm, in a cube sized for 0.5 edges per l^3 at every size;
// - cloth: four stacked wavy square sheets (two triangles per quad, half thickness 0.5 mm)
//          1.5 l apart with amplitude l, so that the layers come close in places;
// - mixed: two such sheets with as many rod edges again, the rods kept in a slab of 6 l
//          around the sheets.
// The inflation is 1 mm (contact distance + tolerance + motion in a step).
//
// For each case and size, one BroadPhase object is called once, timed apart ("first": that
// call allocates the workspace), then --repeats more times (--repeats-1m from 500k elements):
// min/median/max wall time of those calls, the time per element (median), the pairs found and
// whether any call after the first allocated.
// Up to --brute-max elements the O(n^2) brute force is timed too (min of 3) and its pairs are
// checked against the hash's.
//
//   slender_broad_phase_bench [--sizes 1k,10k,100k,1m] [--cases rods,cloth,mixed]
//                             [--repeats N] [--repeats-1m N] [--brute-max N] [--markdown FILE]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "contact/broad_phase.h"

namespace {

using slender::Real;
using slender::bench::cpu_model;
using slender::bench::fmt;
using slender::bench::loadavg;
using slender::bench::omp_threads;
using slender::bench::option_count;
using slender::bench::option_value;
using slender::bench::parse_size;
using slender::bench::print_markdown;
using slender::bench::print_text;
using slender::bench::split;
using slender::bench::Table;
using slender::contact::BroadPhase;
using slender::contact::BroadPhaseInput;
using slender::contact::BroadPhaseOptions;
using slender::contact::CandidatePairs;

constexpr Real kEdge = 0.01;       // [m] edge length l
constexpr Real kRadius = 1e-3;     // [m] rod radius
constexpr Real kHalfThick = 5e-4;  // [m] shell half thickness
constexpr Real kInflation = 1e-3;  // [m]
constexpr Real kRodDensity = 0.5;  // rod edges per l^3
constexpr int kEdgesPerRod = 50;
constexpr Real kPi = 3.14159265358979323846;

struct Geometry {
  std::vector<Real> node_x;              // (nnode x 3)
  std::vector<int> edge_node;            // (nedge x 2)
  std::vector<Real> edge_radius;         // (nedge)
  std::vector<int> tri_node;             // (ntri x 3)
  std::vector<Real> tri_half_thickness;  // (ntri)

  int nnode() const { return int(node_x.size() / 3); }
  int nedge() const { return int(edge_radius.size()); }
  int ntri() const { return int(tri_half_thickness.size()); }
  BroadPhaseInput input() const {
    return BroadPhaseInput{nnode(),
                           node_x.data(),
                           nedge(),
                           edge_node.data(),
                           edge_radius.data(),
                           ntri(),
                           tri_node.data(),
                           tri_half_thickness.data()};
  }
};

/// nedge rod edges in rods of kEdgesPerRod, starting uniformly in [lo, hi] and kept there
void add_rods(Geometry& g, long nedge, const Real lo[3], const Real hi[3], std::mt19937_64& rng) {
  std::uniform_real_distribution<Real> u(0, 1);
  std::normal_distribution<Real> gauss(0, 1);
  auto unit = [](Real v[3]) {
    const Real n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int d = 0; d < 3; ++d)
      v[d] /= n;
  };
  for (long done = 0; done < nedge;) {
    Real p[3], t[3] = {gauss(rng), gauss(rng), gauss(rng)};
    for (int d = 0; d < 3; ++d)
      p[d] = lo[d] + (hi[d] - lo[d]) * u(rng);
    unit(t);
    int prev = g.nnode();
    g.node_x.insert(g.node_x.end(), p, p + 3);
    for (int k = 0; k < kEdgesPerRod && done < nedge; ++k, ++done) {
      for (int d = 0; d < 3; ++d)
        t[d] += 0.3 * gauss(rng);
      unit(t);
      for (int d = 0; d < 3; ++d) {
        p[d] += kEdge * t[d];
        // reflect off the walls, so that the density is the same at every size
        if (p[d] < lo[d] || p[d] > hi[d]) {
          p[d] = p[d] < lo[d] ? 2 * lo[d] - p[d] : 2 * hi[d] - p[d];
          t[d] = -t[d];
        }
      }
      g.node_x.insert(g.node_x.end(), p, p + 3);
      g.edge_node.insert(g.edge_node.end(), {prev, prev + 1});
      g.edge_radius.push_back(kRadius);
      ++prev;
    }
  }
}

/// nlayer wavy sheets of nq x nq quads (2 nlayer nq^2 triangles) at z = 1.5 l k + bumps
void add_cloth(Geometry& g, int nlayer, int nq, std::mt19937_64& rng) {
  std::uniform_real_distribution<Real> jitter(-0.1 * kEdge, 0.1 * kEdge);
  for (int k = 0; k < nlayer; ++k) {
    const int first = g.nnode();
    for (int i = 0; i <= nq; ++i) {
      for (int j = 0; j <= nq; ++j) {
        const Real z = 1.5 * kEdge * k +
                       kEdge * std::sin(2 * kPi * i / 20.0 + k) * std::sin(2 * kPi * j / 20.0);
        g.node_x.insert(g.node_x.end(),
                        {i * kEdge + jitter(rng), j * kEdge + jitter(rng), z + jitter(rng)});
      }
    }
    for (int i = 0; i < nq; ++i) {
      for (int j = 0; j < nq; ++j) {
        const int n00 = first + i * (nq + 1) + j, n01 = n00 + 1, n10 = n00 + nq + 1, n11 = n10 + 1;
        g.tri_node.insert(g.tri_node.end(), {n00, n10, n11, n00, n11, n01});
        g.tri_half_thickness.insert(g.tri_half_thickness.end(), {kHalfThick, kHalfThick});
      }
    }
  }
}

Geometry make_geometry(const std::string& kind, long n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Geometry g;
  if (kind == "rods") {
    const Real side = kEdge * std::cbrt(Real(n) / kRodDensity);
    const Real lo[3] = {0, 0, 0}, hi[3] = {side, side, side};
    add_rods(g, n, lo, hi, rng);
  } else if (kind == "cloth") {
    add_cloth(g, 4, std::max(1, int(std::lround(std::sqrt(n / 8.0)))), rng);
  } else if (kind == "mixed") {
    const int nq = std::max(1, int(std::lround(std::sqrt(n / 8.0))));
    add_cloth(g, 2, nq, rng);
    const Real lo[3] = {0, 0, -2 * kEdge}, hi[3] = {nq * kEdge, nq * kEdge, 4 * kEdge};
    add_rods(g, g.ntri(), lo, hi, rng);
  } else {
    throw std::runtime_error("unknown case '" + kind + "' (rods, cloth, mixed)");
  }
  return g;
}

struct Options {
  std::vector<long> sizes = {1000, 10000, 100000, 1000000};
  std::vector<std::string> cases = {"rods", "cloth", "mixed"};
  int repeats = 10;
  int repeats_1m = 5;  // for 500k elements and more
  long brute_max = 10000;
  std::string markdown;
};

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return option_value(argc, argv, i); };
    if (a == "--sizes") {
      o.sizes.clear();
      for (const std::string& s : split(value()))
        o.sizes.push_back(parse_size(s));
    } else if (a == "--cases") {
      o.cases = split(value());
    } else if (a == "--repeats") {
      o.repeats = option_count(argc, argv, i);
    } else if (a == "--repeats-1m") {
      o.repeats_1m = option_count(argc, argv, i);
    } else if (a == "--brute-max") {
      const double n = slender::bench::option_number(argc, argv, i);
      if (n < 0 || n != std::floor(n)) throw std::runtime_error("--brute-max: not a count");
      o.brute_max = long(n);  // 0: no brute-force comparison
    } else if (a == "--markdown") {
      o.markdown = value();
    } else if (a == "-h" || a == "--help") {
      std::cout << "usage: slender_broad_phase_bench [--sizes 1k,10k,100k,1m] "
                   "[--cases rods,cloth,mixed] [--repeats N] [--repeats-1m N] "
                   "[--brute-max N] [--markdown FILE]\n";
      return false;
    } else {
      throw std::runtime_error("unknown argument '" + a + "'");
    }
  }
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool same_pairs(const CandidatePairs& c,
                const std::vector<int>& ee,
                const std::vector<int>& et,
                const std::vector<int>& tt) {
  return std::vector<int>(c.ee_pair, c.ee_pair + 2 * c.nee) == ee &&
         std::vector<int>(c.et_pair, c.et_pair + 2 * c.net) == et &&
         std::vector<int>(c.tt_pair, c.tt_pair + 2 * c.ntt) == tt;
}

std::vector<std::string> run_case(const std::string& kind, long target, const Options& o) {
  const Geometry g = make_geometry(kind, target, 12345);
  const BroadPhaseInput in = g.input();
  BroadPhaseOptions opt;
  opt.inflation = kInflation;
  const long nelem = long(g.nedge()) + g.ntri();

  BroadPhase bp;
  auto t0 = std::chrono::steady_clock::now();
  CandidatePairs c = bp.find_pairs(in, opt);
  const double first = seconds_since(t0);
  const long ngrow_first = bp.stats().ngrow;
  const int repeats = nelem >= 500000 ? o.repeats_1m : o.repeats;
  std::vector<double> wall;
  for (int r = 0; r < repeats; ++r) {
    t0 = std::chrono::steady_clock::now();
    c = bp.find_pairs(in, opt);
    wall.push_back(seconds_since(t0));
  }
  std::sort(wall.begin(), wall.end());
  const double med = wall[wall.size() / 2];
  const long npair = c.nee + c.net + c.ntt;

  std::string brute = "-", ratio = "-";
  if (nelem <= o.brute_max) {
    std::vector<int> ee, et, tt;
    double best = 1e300;
    for (int r = 0; r < 3; ++r) {
      t0 = std::chrono::steady_clock::now();
      slender::contact::find_pairs_brute_force(in, opt, ee, et, tt);
      best = std::min(best, seconds_since(t0));
    }
    if (!same_pairs(c, ee, et, tt)) throw std::runtime_error(kind + ": brute force disagrees");
    brute = fmt("%.2f", 1e3 * best);
    ratio = fmt("%.0f", best / wall.front());
  }
  const slender::contact::BroadPhaseStats& s = bp.stats();
  return {kind,
          std::to_string(nelem),
          std::to_string(c.nee) + " / " + std::to_string(c.net) + " / " + std::to_string(c.ntt),
          fmt("%.2f", double(npair) / double(nelem)),
          std::to_string(repeats),
          fmt("%.2f", 1e3 * first),
          fmt("%.3f", 1e3 * wall.front()),
          fmt("%.3f", 1e3 * med),
          fmt("%.3f", 1e3 * wall.back()),
          fmt("%.0f", 1e9 * med / double(nelem)),
          fmt("%.2f", s.cell_size / kEdge),
          fmt("%.1f", double(s.nentry) / double(nelem)),
          std::to_string(s.nlarge),
          fmt("%.1f", double(s.bytes) / (1 << 20)),
          std::to_string(s.ngrow - ngrow_first),
          brute,
          ratio};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse_args(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "slender_broad_phase_bench: " << e.what() << '\n';
    return 2;
  }
  Table t;
  t.head = {
      "case",     "elements",      "pairs ee / et / tt", "pairs/elem", "runs",     "first [ms]",
      "min [ms]", "median [ms]",   "max [ms]",           "ns/elem",    "cell/l",   "entries/elem",
      "large",    "workspace MiB", "grows after 1st",    "brute [ms]", "brute/min"};
  const std::string head = slender::bench::machine_head();
  std::cout << head;
  for (const std::string& kind : o.cases) {
    for (const long n : o.sizes) {
      try {
        t.rows.push_back(run_case(kind, n, o));
        std::cerr << "  done " << kind << " " << n << '\n';
      } catch (const std::exception& e) {
        std::cerr << "slender_broad_phase_bench: " << e.what() << '\n';
        return 1;
      }
    }
  }
  print_text(std::cout, t);
  std::cout << "load average at end " << loadavg() << '\n';
  if (!o.markdown.empty()) {
    std::ofstream md = slender::bench::open_markdown(
        o.markdown, "slender_broad_phase_bench", slender::bench::command_line(argc, argv), head);
    if (!md) return 1;
    md << "- load average at end: " << loadavg() << "\n\n";
    print_markdown(md, t);
    if (!slender::bench::close_markdown(md, o.markdown, "slender_broad_phase_bench")) return 1;
  }
  return 0;
}
