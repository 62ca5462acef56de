// slender_stencil_bench: one stencil's evaluation alone on one host thread, nanoseconds a call
// (energy, gradient and Hessian), for the large stencils whose device kernels were restructured
// to fit their registers (issue 47: the bend-twist spring; issue 48: the shell hinge and the
// membrane triangle).
//
// Each case evaluates 4,096 stencils of random shapes near a straight rod or a flat hinge (fixed
// seed) `--calls` times in a row; a repeat's time over the calls gives ns a call, and the table
// gives min/median/max over the repeats. Every entry of every result enters a checksum (printed
// to 17 digits): two builds that print the same checksum computed the same bits, and the
// compiler cannot drop an entry that is not read.
//
//   slender_stencil_bench [--repeats N] [--calls N] [--markdown FILE]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/stencils/rod_bend_twist.h"
#include "slender/stencils/shell_hinge.h"
#include "slender/stencils/shell_membrane.h"

namespace {

using namespace slender;
using Clock = std::chrono::steady_clock;

constexpr int kStencils = 4096;

struct Result {
  std::vector<double> ns;  // a call, each repeat
  double checksum = 0;
};

template <int D>
double weighted_sum(const LocalEval<D>& r) {
  double s = r.E;
  for (int i = 0; i < D; ++i)
    s += r.g[i] * (i + 1);
  for (int i = 0; i < D * D; ++i)
    s += r.H.a[i] * (i + 1) * 1e-3;
  return s;
}

// evaluates eval(k, r) for every k, `calls` times over, `repeats` times
template <int D, class Eval>
Result time_case(int repeats, int calls, const Eval& eval) {
  Result out;
  for (int rep = 0; rep < repeats; ++rep) {
    double sum = 0;
    const auto t0 = Clock::now();
    for (int c = 0; c < calls; ++c)
      for (int k = 0; k < kStencils; ++k) {
        LocalEval<D> r;
        eval(k, r);
        sum += weighted_sum(r);
      }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    out.ns.push_back(s / (double(calls) * kStencils) * 1e9);
    out.checksum = sum;
  }
  return out;
}

// bend-twist springs of a rod along x with small random kinks, twists and natural strains
Result bend_twist_case(int repeats, int calls, bool planar) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Vec<11>> xs(kStencils);
  std::vector<RodBendTwist::Params> ps(kStencils);
  for (int k = 0; k < kStencils; ++k) {
    Vec<11> x;
    for (int a = 0; a < 3; ++a) {
      x[3 * a] = 0.01 * a + 1e-4 * u(rng);
      x[3 * a + 1] = planar ? 0 : 1e-4 * u(rng);
      x[3 * a + 2] = 1e-4 * u(rng);
    }
    x[9] = planar ? 0 : 0.1 * u(rng);
    x[10] = planar ? 0 : 0.1 * u(rng);
    RodBendTwist::Params p{};
    const Vec3 e[2] = {x.segment<3>(3) - x.segment<3>(0), x.segment<3>(6) - x.segment<3>(3)};
    Vec3 d1[2];
    for (int i = 0; i < 2; ++i) {  // the reference director: y made normal to the edge
      const Vec3 t = e[i] / norm(e[i]);
      const Vec3 d = vec3(0, 1, 0) - t[1] * t;
      d1[i] = d / norm(d);
    }
    p.d1_0 = d1[0];
    p.d1_1 = d1[1];
    p.ref_twist = planar ? 0 : 0.01 * u(rng);
    p.EI1 = 1e-3;
    p.EI2 = 2e-3;
    p.GJ = 8e-4;
    p.dl = 0.01;
    p.kappa1_bar = 0.1 * u(rng);
    p.kappa2_bar = planar ? 0 : 0.1 * u(rng);
    p.tau_bar = planar ? 0 : 0.05 * u(rng);
    p.in_plane = planar ? 1 : 0;
    xs[size_t(k)] = x;
    ps[size_t(k)] = p;
  }
  return time_case<11>(repeats, calls, [&](int k, LocalEval<11>& r) {
    rod_bend_twist_eval(xs[size_t(k)], ps[size_t(k)], kGradHess, r);
  });
}

// hinges of two wings near flat, folded by up to about 0.3 rad, with natural angles
Result hinge_case(int repeats, int calls) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Vec<12>> xs(kStencils);
  std::vector<ShellHinge::Params> ps(kStencils);
  const double flat[12] = {0, 0, 0, 0.01, 0, 0, 0.005, 0.008, 0, 0.005, -0.008, 0};
  for (int k = 0; k < kStencils; ++k) {
    for (int i = 0; i < 12; ++i)
      xs[size_t(k)][i] = flat[i] + 1e-3 * u(rng);
    ps[size_t(k)] = ShellHinge::Params{1e-4, 0.1 * u(rng)};
  }
  return time_case<12>(repeats, calls, [&](int k, LocalEval<12>& r) {
    shell_hinge_eval(xs[size_t(k)], ps[size_t(k)], kGradHess, r);
  });
}

// membrane triangles stretched up to about 5 % from their rest shapes (fixed seed)
Result membrane_case(int repeats, int calls, int law) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Vec<9>> xs(kStencils);
  std::vector<ShellMembrane::Params> ps(kStencils);
  const double rest[9] = {0, 0, 0, 0.01, 0, 0, 0.005, 0.0087, 0};
  for (int k = 0; k < kStencils; ++k) {
    Vec<9> x0, x;
    for (int i = 0; i < 9; ++i) {
      x0[i] = rest[i] + 2e-4 * u(rng);
      x[i] = x0[i] * (1 + 0.05 * u(rng)) + 1e-4 * u(rng);
    }
    ShellMembrane::Params p{law, 1e6, 0.3, 1e-3, 0, 0, 0};
    shell_membrane_metric(x0, p.g11, p.g22, p.g12);
    xs[size_t(k)] = x;
    ps[size_t(k)] = p;
  }
  return time_case<9>(repeats, calls, [&](int k, LocalEval<9>& r) {
    shell_membrane_eval(xs[size_t(k)], ps[size_t(k)], kGradHess, r);
  });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace slender::bench;
  int repeats = 9, calls = 50;
  std::string markdown;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--repeats") {
        repeats = option_count(argc, argv, i);
      } else if (a == "--calls") {
        calls = option_count(argc, argv, i);
      } else if (a == "--markdown") {
        markdown = option_value(argc, argv, i);
      } else {
        std::cerr << "usage: slender_stencil_bench [--repeats N] [--calls N] [--markdown FILE]\n";
        return 2;
      }
    }
    if (repeats < 1 || calls < 1) throw std::runtime_error("--repeats and --calls must be >= 1");
  } catch (const std::exception& e) {
    std::cerr << "slender_stencil_bench: " << e.what() << '\n';
    return 2;
  }

  const std::string head = machine_head();
  std::cout << head << "one host thread; " << kStencils << " stencils x " << calls
            << " calls a repeat, " << repeats << " repeats; energy, gradient and Hessian\n\n";
  Table t;
  t.head = {"stencil", "DOFs", "min [ns/call]", "median [ns/call]", "max [ns/call]", "checksum"};
  auto row = [&](const std::string& name, int dofs, Result r) {
    std::sort(r.ns.begin(), r.ns.end());
    char sum[32];
    std::snprintf(sum, sizeof sum, "%.17g", r.checksum);
    t.rows.push_back({name, std::to_string(dofs), fmt("%.1f", r.ns.front()),
                      fmt("%.1f", r.ns[r.ns.size() / 2]), fmt("%.1f", r.ns.back()), sum});
  };
  row("rod bend-twist", 11, bend_twist_case(repeats, calls, false));
  row("rod bend-twist, planar (2D mode)", 11, bend_twist_case(repeats, calls, true));
  row("shell hinge", 12, hinge_case(repeats, calls));
  row("membrane, St Venant-Kirchhoff", 9, membrane_case(repeats, calls, ShellMembrane::kStvk));
  row("membrane, neo-Hookean", 9, membrane_case(repeats, calls, ShellMembrane::kNeoHookean));
  print_text(std::cout, t);
  if (!markdown.empty()) {
    std::ofstream md =
        open_markdown(markdown, "slender_stencil_bench", command_line(argc, argv), head);
    if (!md) return 1;
    md << '\n';
    print_markdown(md, t);
    if (!close_markdown(md, markdown, "slender_stencil_bench")) return 1;
  }
  return 0;
}
