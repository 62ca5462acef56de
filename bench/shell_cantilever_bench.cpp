// MAT-DiSMech Fig. 8 (seed 000; BENCHMARKS.md V1/V2) for shells: the strip cantilever
// L = 0.1 m, width 0.01 m, thickness 1 mm, rho = 1200 kg/m^3, nu = 0.5, gravity 9.8 m/s^2,
// clamped at one short edge, static, at E = 20 GPa, 2 GPa, 200 MPa and 20 MPa. Hinge bending
// with the papers' stiffness and with the geometric one (docs/numerics.md), and mid-edge
// bending, each on the near-equilateral lattice and on the grid of right triangles. The tip
// deflection (the mean over the free edge's nodes) is compared with Euler-Bernoulli,
// delta = rho g A L^4 / (8 E I), and with the heavy elastica of the same E I (the large
// deflection of an inextensible beam under its own weight, solved here by shooting). A second
// table follows the 20 GPa strip under refinement.
//
//   slender_shell_cantilever_bench [--edges 1.25e-3,0.625e-3] [--refine 2.5e-3,...,0.3125e-3]
//                                  [--markdown FILE]

#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace slender::bench {
namespace {

constexpr Real kL = 0.1, kW = 0.01, kH = 1e-3, kRho = 1200, kG = 9.8, kNu = 0.5;
constexpr Real kClamp = 0.0025;  // the clamped strip behind x = 0, as tests/physics/shell_test.cpp

enum class Model3 { kHingePapers, kHingeGeometric, kMidEdge };
const char* model_name(Model3 k) {
  return k == Model3::kHingePapers      ? "hinge (papers)"
         : k == Model3::kHingeGeometric ? "hinge (geometric)"
                                        : "mid-edge";
}

struct Tip {
  Real delta = 0;  // [m], positive down
  bool ok = true;
  int nodes = 0;
};

// the strip's static tip deflection, the load in `steps` equal steps
Tip strip_tip(Real edge, bool grid, Model3 kind, Real E, int steps) {
  SceneBuilder b;
  const int mat = b.material("m", kRho, E, kNu);
  const ShellBending bending =
      kind == Model3::kMidEdge ? ShellBending::kMidEdge : ShellBending::kHinge;
  const int s = b.rectangle_shell("strip", vec3(-kClamp, 0, 0), vec3(kL + kClamp, 0, 0),
                                  vec3(0, kW, 0), edge, grid, mat, kH, bending);
  b.membrane(s, MembraneModel::kSprings);  // the papers' membrane, as MAT-DiSMech's Fig. 8
  if (kind == Model3::kHingeGeometric) b.part(s).hinge_stiffness = HingeStiffness::kGeometric;
  const PartSpec& part = b.part(s);
  for (int i = 0; i < int(part.nodes.size()); ++i)
    if (part.nodes[i][0] <= 1e-12) b.fix_node(s, i);
  b.gravity(vec3(0, 0, -kG));
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 1.0 / steps;
  b.integrator().duration = 1;
  const auto m = build_model(b.build());
  Simulator sim(m);
  Tip tip;
  tip.nodes = m->nnode;
  for (int k = 0; k < steps; ++k)
    tip.ok = sim.step().ok() && tip.ok;
  int count = 0;
  for (int n = 0; n < m->nnode; ++n) {
    if (m->node_x0[3 * n] < kL - 1e-9) continue;
    tip.delta -= sim.state().q[3 * n + 2];
    ++count;
  }
  tip.delta /= count;
  return tip;
}

Real euler_bernoulli(Real E) {
  const Real I = kW * kH * kH * kH / 12, q = kRho * kG * kW * kH;
  return q * std::pow(kL, 4) / (8 * E * I);
}

// The heavy elastica: an inextensible cantilever of rigidity EI under its weight q per length,
// clamped level at s = 0. With theta(s) the slope below the horizontal, the moment
// EI theta' = M(s) = q int_s^L (x(sigma) - x(s)) dsigma gives
//   EI theta'' = -q (L - s) cos(theta),  theta(0) = 0,  theta'(L) = 0.
// Shooting on theta'(0) (bisection: theta'(L) grows with it), RK4 in s; the tip deflection is
// int_0^L sin(theta) ds. For small q L^3 / EI it is q L^4 / (8 EI).
Real heavy_elastica(Real E) {
  const Real EI = E * kW * kH * kH * kH / 12, q = kRho * kG * kW * kH;
  const int n = 4000;
  const Real ds = kL / n;
  // integrates (theta, kappa, z) from s = 0 with kappa(0) = k0; returns kappa(L), sets z(L)
  auto shoot = [&](Real k0, Real& z) {
    Real th = 0, ka = k0;
    z = 0;
    auto f = [&](Real s, Real t, Real k, Real& dt, Real& dk, Real& dz) {
      dt = k;
      dk = -q * (kL - s) * std::cos(t) / EI;
      dz = std::sin(t);
    };
    for (int i = 0; i < n; ++i) {
      const Real s = i * ds;
      Real a1, b1, c1, a2, b2, c2, a3, b3, c3, a4, b4, c4;
      f(s, th, ka, a1, b1, c1);
      f(s + ds / 2, th + ds / 2 * a1, ka + ds / 2 * b1, a2, b2, c2);
      f(s + ds / 2, th + ds / 2 * a2, ka + ds / 2 * b2, a3, b3, c3);
      f(s + ds, th + ds * a3, ka + ds * b3, a4, b4, c4);
      th += ds / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
      ka += ds / 6 * (b1 + 2 * b2 + 2 * b3 + b4);
      z += ds / 6 * (c1 + 2 * c2 + 2 * c3 + c4);
    }
    return ka;
  };
  // the clamp moment lies between 0 and the linear one q L^2 / 2 (the arm only shortens)
  Real lo = 0, hi = q * kL * kL / (2 * EI), z = 0;
  for (int it = 0; it < 100; ++it) {
    const Real mid = (lo + hi) / 2;
    (shoot(mid, z) > 0 ? hi : lo) = mid;
  }
  shoot((lo + hi) / 2, z);
  return z;
}

std::string pct(Real a, Real b) { return fmt("%+.2f %%", 100 * (a / b - 1)); }

std::vector<Real> numbers(const std::string& list) {
  std::vector<Real> v;
  for (const std::string& s : split(list))
    v.push_back(std::stod(s));
  return v;
}

int run(int argc, char** argv) {
  std::vector<Real> edges = {1.25e-3, 0.625e-3};
  std::vector<Real> refine = {2.5e-3, 1.25e-3, 0.625e-3, 0.3125e-3};
  std::string markdown;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--edges") {
      edges = numbers(option_value(argc, argv, i));
    } else if (a == "--refine") {
      refine = numbers(option_value(argc, argv, i));
    } else if (a == "--markdown") {
      markdown = option_value(argc, argv, i);
    } else {
      throw std::runtime_error("unknown option '" + a +
                               "' (--edges LIST, --refine LIST, --markdown FILE)");
    }
  }
  const std::string head = machine_head();
  std::cout << head;

  // Fig. 8: every modulus, model and mesh at the given edge lengths
  Table fig8{{"E [Pa]", "model", "mesh", "edge [mm]", "nodes", "tip [m]", "tip / L",
              "vs Euler-Bernoulli", "vs heavy elastica"},
             {}};
  for (const Real E : {2e10, 2e9, 2e8, 2e7}) {
    const Real eb = euler_bernoulli(E), el = heavy_elastica(E);
    std::printf("E %.0e: Euler-Bernoulli %.5e m, heavy elastica %.5e m (%.3f L)\n", E, eb, el,
                el / kL);
    for (const Model3 kind : {Model3::kHingePapers, Model3::kHingeGeometric, Model3::kMidEdge})
      for (const bool grid : {false, true})
        for (const Real edge : edges) {
          const Tip t = strip_tip(edge, grid, kind, E, E < 1e9 ? 10 : 1);
          fig8.rows.push_back({fmt("%.0e", E), model_name(kind), grid ? "grid" : "lattice",
                               fmt("%.4g", edge * 1e3), std::to_string(t.nodes),
                               t.ok ? fmt("%.4e", t.delta) : "failed", fmt("%.3f", t.delta / kL),
                               pct(t.delta, eb), pct(t.delta, el)});
          std::printf("  %-18s %-7s %.4g mm: %.4e m %s (EB %s, elastica %s)\n", model_name(kind),
                      grid ? "grid" : "lattice", edge * 1e3, t.delta, t.ok ? "" : "FAILED",
                      pct(t.delta, eb).c_str(), pct(t.delta, el).c_str());
          std::fflush(stdout);
        }
  }

  // refinement at 20 GPa
  Table conv{{"model", "mesh", "edge [mm]", "nodes", "tip [m]", "vs Euler-Bernoulli"}, {}};
  const Real E = 2e10, eb = euler_bernoulli(E);
  for (const Model3 kind : {Model3::kHingePapers, Model3::kHingeGeometric, Model3::kMidEdge})
    for (const bool grid : {false, true})
      for (const Real edge : refine) {
        const Tip t = strip_tip(edge, grid, kind, E, 1);
        conv.rows.push_back({model_name(kind), grid ? "grid" : "lattice", fmt("%.4g", edge * 1e3),
                             std::to_string(t.nodes), t.ok ? fmt("%.4e", t.delta) : "failed",
                             pct(t.delta, eb)});
        std::printf("refine %-18s %-7s %.4g mm: %s\n", model_name(kind), grid ? "grid" : "lattice",
                    edge * 1e3, pct(t.delta, eb).c_str());
        std::fflush(stdout);
      }

  std::cout << "\nMAT-DiSMech Fig. 8, the V2 strip (tip = mean deflection of the free edge)\n";
  print_text(std::cout, fig8);
  std::cout << "\nrefinement at E = 20 GPa\n";
  print_text(std::cout, conv);
  if (!markdown.empty()) {
    std::ofstream md =
        open_markdown(markdown, "slender_shell_cantilever_bench", command_line(argc, argv), head);
    if (!md) return 1;
    md << "\n### MAT-DiSMech Fig. 8, the V2 strip\n\n";
    print_markdown(md, fig8);
    md << "\n### Refinement at E = 20 GPa\n\n";
    print_markdown(md, conv);
    if (!close_markdown(md, markdown, "slender_shell_cantilever_bench")) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace slender::bench

int main(int argc, char** argv) {
  try {
    return slender::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "slender_shell_cantilever_bench: " << e.what() << '\n';
    return 1;
  }
}
