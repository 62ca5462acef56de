// slender_bench: the speed cases S1-S4, S6 and S7 of BENCHMARKS.md.
//
// Every case is a scene file in bench/scenes. For each repeat the scene is read and the model
// built once, outside the timed region; only the stepping loop (Simulator::step() from t = 0 to
// the scene's duration) is timed. The table gives min/median/max wall time over the repeats,
// Newton iterations per step, the anchor's figure and the ratio anchor / our median, plus one
// physics figure per case so that a fast but wrong run is visible.
//
//   slender_bench [CASE...] [--repeats N] [--solver auto|cholmod|eigen-ldlt|sparse-lu|pcg|banded]
//                 [--markdown FILE] [--scenes DIR] [--list]
//
// CASE is a case id (S1, S2, S3, S4, S6-1e5, S6-1e6, S6-1e7, S7; S1-2d and S2-2d: S1 and S2 with
// integrator.two_d, motion in the x-z plane) or a prefix of one that is no id itself (S6 selects
// all three), case-insensitive; no CASE runs them all.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/simulator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef SLENDER_BENCH_SCENES_DIR
#define SLENDER_BENCH_SCENES_DIR "bench/scenes"
#endif

namespace {

using slender::bench::cpu_model;
using slender::bench::fmt;
using slender::bench::omp_threads;
using slender::bench::option_count;
using slender::bench::option_value;
using slender::bench::print_markdown;
using slender::bench::print_text;
using slender::bench::Table;

using slender::Real;

constexpr double kPi = 3.14159265358979323846;

enum class Physics { kNone, kTipPeriod, kFinalZ, kTipDeflection };

struct Case {
  const char* id;
  const char* file;
  const char* anchor_source;  // who measured the anchor
  double anchor_s;            // anchor wall time for the whole run [s]; < 0: per step
  double anchor_ms_per_step;  // anchor per step [ms] when anchor_s < 0
  Physics physics;
  bool two_d = false;  // the scene with integrator.two_d set (motion in the x-z plane)
};

// Anchors: DisMech (C++) measured on the project's reference machine (single core, implicit
// midpoint, MKL Pardiso) for S1-S4; paper figures for S6 (Py-DiSMech, Ryzen 9 9950X) and S7
// (Cosserat shooting method, per step).
const Case kCases[] = {
    {"S1", "s1_cantilever_e1e5.json", "DisMech C++ (ref. machine)", 0.48, 0, Physics::kTipPeriod},
    {"S2", "s2_cantilever_e1e7.json", "DisMech C++ (ref. machine)", 0.90, 0, Physics::kTipPeriod},
    {"S1-2d", "s1_cantilever_e1e5.json", "DisMech 3D / 2 (issue 53)", 0.24, 0, Physics::kTipPeriod,
     true},
    {"S2-2d", "s2_cantilever_e1e7.json", "DisMech 3D / 2 (issue 53)", 0.45, 0, Physics::kTipPeriod,
     true},
    {"S3", "s3_helix_e1e7.json", "DisMech C++ (ref. machine)", 5.72, 0, Physics::kFinalZ},
    {"S3-newmark", "s3_helix_e1e7_newmark.json", "DisMech C++ (ref. machine)", 5.72, 0,
     Physics::kFinalZ},
    {"S3-euler", "s3_helix_e1e7_euler.json", "Py-DiSMech (paper)", 0.79, 0, Physics::kFinalZ},
    {"S4", "s4_helix_e1e9.json", "DisMech C++ (ref. machine)", 2.38, 0, Physics::kFinalZ},
    {"S6-1e5", "s6_cantilever101_e1e5.json", "Py-DiSMech (paper)", 1.27, 0,
     Physics::kTipDeflection},
    {"S6-1e6", "s6_cantilever101_e1e6.json", "Py-DiSMech (paper)", 2.37, 0,
     Physics::kTipDeflection},
    {"S6-1e7", "s6_cantilever101_e1e7.json", "Py-DiSMech (paper)", 2.35, 0,
     Physics::kTipDeflection},
    {"S7", "s7_steel_rod.json", "Cosserat shooting (paper)", -1, 7.1, Physics::kTipDeflection},
};

struct Options {
  std::vector<std::string> cases;
  int repeats = 5;
  slender::LinearSolverKind solver = slender::LinearSolverKind::kAuto;
  std::string solver_arg = "auto";
  std::string markdown;
  std::string scenes = SLENDER_BENCH_SCENES_DIR;
  bool strict = false;  // Slender's default Newton tolerances instead of the scenes'
};

struct RunOutcome {
  bool ok = true;
  std::string failure;  // why the run stopped
  double wall = 0;      // [s], stepping only
  long steps = 0;
  long newton_iters = 0;
  std::vector<Real> tip_t, tip_z;  // time series of the last node's z (for the period)
  Real final_tip[3] = {0, 0, 0};   // last node's position at the end
  slender::PhaseTimes phases;
  std::string solver_name;
};

struct CaseResult {
  const Case* c = nullptr;
  bool ok = true;
  std::string failure;
  int ndof = 0, nfree = 0;
  long steps = 0;
  double iters_per_step = 0;
  double wmin = 0, wmed = 0, wmax = 0;
  std::string physics;
  std::string solver_name;
  slender::PhaseTimes phases;  // of the median run
};

std::string lower(std::string s) {
  for (char& ch : s)
    ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

void usage(std::ostream& os) {
  os << "usage: slender_bench [CASE...] [--repeats N] "
        "[--solver auto|cholmod|eigen-ldlt|sparse-lu|pcg|banded] [--markdown FILE] [--scenes DIR] "
        "[--strict] [--list]\n"
        "--strict: Slender's default Newton tolerances instead of the scenes' (DisMech's)\n"
        "cases:";
  for (const Case& c : kCases)
    os << ' ' << c.id;
  os << " (an id selects its case; a prefix that is no id selects several, e.g. S6)\n";
}

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return option_value(argc, argv, i); };
    if (a == "--strict") {
      o.strict = true;
    } else if (a == "--repeats") {
      o.repeats = option_count(argc, argv, i);
    } else if (a == "--solver") {
      o.solver_arg = value();
      o.solver = slender::bench::parse_solver(o.solver_arg);
    } else if (a == "--markdown") {
      o.markdown = value();
    } else if (a == "--scenes") {
      o.scenes = value();
    } else if (a == "--list") {
      for (const Case& c : kCases)
        std::cout << c.id << "  " << c.file << '\n';
      return false;
    } else if (a == "-h" || a == "--help") {
      usage(std::cout);
      return false;
    } else if (!a.empty() && a[0] == '-') {
      throw std::runtime_error("unknown option '" + a + "'");
    } else {
      o.cases.push_back(a);
    }
  }
  return true;
}

std::vector<const Case*> select_cases(const std::vector<std::string>& args) {
  std::vector<const Case*> out;
  if (args.empty()) {
    for (const Case& c : kCases)
      out.push_back(&c);
    return out;
  }
  for (const std::string& a : args) {
    const std::string la = lower(a);
    // an id selects its own case only (S1, not S1-2d); otherwise a prefix selects every case
    // it begins
    bool exact = false;
    for (const Case& c : kCases)
      exact = exact || lower(c.id) == la;
    bool found = false;
    for (const Case& c : kCases) {
      const std::string id = lower(c.id);
      if (id == la || (!exact && id.compare(0, la.size(), la) == 0)) {
        if (std::find(out.begin(), out.end(), &c) == out.end()) out.push_back(&c);
        found = true;
      }
    }
    if (!found) throw std::runtime_error("unknown case '" + a + "'");
  }
  return out;
}

// one timed run: model built before the clock starts, only the steps are timed
RunOutcome run_once(const slender::SceneSpec& scene, const Options& o, Physics physics) {
  RunOutcome r;
  const std::shared_ptr<const slender::Model> model = slender::build_model(scene);
  slender::Simulator sim(model, scene.integrator, o.solver);
  r.solver_name = sim.linear_solver_name();
  const Real dt = scene.integrator.dt;
  const long nsteps = long(std::ceil(scene.integrator.duration / dt - 1e-9));
  const int p0 = model->part_node_adr[0];
  const int np = model->part_node_adr[1] - p0;
  const int tip = model->part_node[p0 + np - 1];
  const int tip_z = model->node_dof(tip) + 2;
  const bool series = physics == Physics::kTipPeriod;
  if (series) {
    r.tip_t.reserve(nsteps + 1);
    r.tip_z.reserve(nsteps + 1);
    r.tip_t.push_back(sim.state().time);
    r.tip_z.push_back(sim.state().q[tip_z]);
  }

  const auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < nsteps; ++s) {
    const slender::StepReport rep = sim.step();
    r.newton_iters += rep.iterations;
    if (!rep.ok()) {
      r.ok = false;
      r.failure = "step " + std::to_string(s + 1) + " at t = " + fmt("%.6g", sim.state().time) +
                  ": " + slender::to_string(rep.status) + " after " +
                  std::to_string(rep.iterations) + " iterations (residual " +
                  fmt("%.3g", rep.residual) + ", first " + fmt("%.3g", rep.residual0) + ")";
      break;
    }
    ++r.steps;
    if (series) {
      r.tip_t.push_back(sim.state().time);
      r.tip_z.push_back(sim.state().q[tip_z]);
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  r.wall = std::chrono::duration<double>(t1 - t0).count();
  for (int k = 0; k < 3; ++k)
    r.final_tip[k] = sim.state().q[model->node_dof(tip) + k];
  r.phases = sim.phase_times();
  return r;
}

// S1/S2: period of the tip's z from its zero crossings, against the Euler-Bernoulli first mode
// omega1 = 1.8751^2 sqrt(EI / (rho A Leff^4)), Leff = L - half the clamped edge.
std::string period_text(const slender::SceneSpec& scene, const RunOutcome& r) {
  std::vector<Real> cross;
  for (size_t i = 1; i + 1 < r.tip_z.size(); ++i) {
    const Real a = r.tip_z[i], b = r.tip_z[i + 1];
    if ((a < 0 && b >= 0) || (a > 0 && b <= 0)) {
      cross.push_back(r.tip_t[i] + (r.tip_t[i + 1] - r.tip_t[i]) * a / (a - b));
    }
  }
  const slender::Material& m = scene.materials[scene.parts[0].material];
  const Real rad = scene.parts[0].section.radius;
  const auto& nodes = scene.parts[0].nodes;
  Real L = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    Real d2 = 0;
    for (int k = 0; k < 3; ++k)
      d2 += (nodes[i][k] - nodes[i - 1][k]) * (nodes[i][k] - nodes[i - 1][k]);
    L += std::sqrt(d2);
  }
  const Real l0 = L / Real(nodes.size() - 1);
  const Real Leff = L - 0.5 * l0;
  const Real EI = m.youngs_modulus * kPi * std::pow(rad, 4) / 4;
  const Real rhoA = m.density * kPi * rad * rad;
  const Real omega = 1.8751 * 1.8751 * std::sqrt(EI / (rhoA * std::pow(Leff, 4)));
  const Real period_th = 2 * kPi / omega;
  if (cross.size() < 2)
    return "period: too few zero crossings (theory " + fmt("%.4g", period_th) + " s)";
  const Real period = 2 * (cross.back() - cross.front()) / Real(cross.size() - 1);
  return "tip period " + fmt("%.4f", period) + " s vs theory " + fmt("%.4f", period_th) + " s (" +
         fmt("%+.2f", 100 * (period / period_th - 1)) + " %)";
}

std::string physics_text(const slender::SceneSpec& scene, const Case& c, const RunOutcome& r) {
  switch (c.physics) {
    case Physics::kTipPeriod:
      return period_text(scene, r);
    case Physics::kFinalZ:
      return "last node z(T) = " + fmt("%.6f", r.final_tip[2]) + " m";
    case Physics::kTipDeflection: {
      const auto& x0 = scene.parts[0].nodes.back();
      return "tip displacement at T (" + fmt("%.4g", r.final_tip[0] - x0[0]) + ", " +
             fmt("%.4g", r.final_tip[1] - x0[1]) + ", " + fmt("%.4g", r.final_tip[2] - x0[2]) +
             ") m";
    }
    case Physics::kNone:
      break;
  }
  return "";
}

}  // namespace

namespace {

std::string anchor_text(const Case& c) {
  if (c.anchor_s >= 0) return fmt("%.2f s", c.anchor_s);
  return fmt("%.1f ms/step", c.anchor_ms_per_step);
}

// anchor / our median (> 1: we are faster)
double anchor_ratio(const Case& c, const CaseResult& r) {
  if (!r.ok || r.wmed <= 0 || r.steps <= 0) return 0;
  if (c.anchor_s >= 0) return c.anchor_s / r.wmed;
  return c.anchor_ms_per_step / (1e3 * r.wmed / double(r.steps));
}

CaseResult run_case(const Case& c, const Options& o) {
  CaseResult res;
  res.c = &c;
  const std::string path = o.scenes + "/" + c.file;
  slender::SceneSpec scene = slender::read_scene_file(path);
  if (o.strict) scene.integrator.newton = slender::NewtonSpec{};
  if (c.two_d) scene.integrator.two_d = true;
  {
    const std::shared_ptr<const slender::Model> m = slender::build_model(scene);
    res.ndof = m->ndof;
    res.nfree = m->plan.nfree;
  }
  std::vector<RunOutcome> runs;
  for (int k = 0; k < o.repeats; ++k) {
    runs.push_back(run_once(scene, o, c.physics));
    const RunOutcome& r = runs.back();
    std::fprintf(stderr, "  %-7s run %d/%d: %.4f s, %ld steps%s\n", c.id, k + 1, o.repeats, r.wall,
                 r.steps, r.ok ? "" : " (FAILED)");
    if (!r.ok) {
      res.ok = false;
      res.failure = r.failure;
      break;
    }
  }
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return runs[a].wall < runs[b].wall; });
  const RunOutcome& med = runs[order[order.size() / 2]];
  res.wmin = runs[order.front()].wall;
  res.wmax = runs[order.back()].wall;
  // median: middle value, mean of the two middle values for an even count
  res.wmed =
      order.size() % 2 == 1 ? med.wall : 0.5 * (runs[order[order.size() / 2 - 1]].wall + med.wall);
  res.steps = med.steps;
  res.iters_per_step = med.steps > 0 ? double(med.newton_iters) / double(med.steps) : 0;
  res.phases = med.phases;
  res.solver_name = med.solver_name;
  res.physics = res.ok ? physics_text(scene, c, med) : "FAILED: " + res.failure;
  return res;
}

Table main_table(const std::vector<CaseResult>& results) {
  Table t;
  t.head = {"case",    "DOF (free)", "steps",  "Newton it/step", "min [s]", "median [s]",
            "max [s]", "ms/step",    "anchor", "anchor/median",  "physics"};
  for (const CaseResult& r : results) {
    const double ratio = anchor_ratio(*r.c, r);
    t.rows.push_back({r.c->id, std::to_string(r.ndof) + " (" + std::to_string(r.nfree) + ")",
                      std::to_string(r.steps), fmt("%.2f", r.iters_per_step), fmt("%.4f", r.wmin),
                      fmt("%.4f", r.wmed), fmt("%.4f", r.wmax),
                      r.steps > 0 ? fmt("%.3f", 1e3 * r.wmed / double(r.steps)) : "-",
                      anchor_text(*r.c), ratio > 0 ? fmt("%.2fx", ratio) : "-", r.physics});
  }
  return t;
}

Table phase_table(const std::vector<CaseResult>& results) {
  Table t;
  t.head = {"case",   "solver", "frames",       "eval",  "assemble",
            "factor", "solve",  "line search*", "other", "factorizations/step"};
  for (const CaseResult& r : results) {
    const slender::PhaseTimes& p = r.phases;
    const double n = p.steps > 0 ? double(p.steps) : 1;
    // the line search's own residual evaluations are counted in frames/eval/assemble as well
    const double sum = p.frames + p.eval + p.assemble + p.factor + p.solve;
    const double other = r.wmed - sum;
    auto ms = [&](double v) { return fmt("%.3f", 1e3 * v / n); };
    t.rows.push_back({r.c->id, r.solver_name, ms(p.frames), ms(p.eval), ms(p.assemble),
                      ms(p.factor), ms(p.solve), ms(p.line_search), ms(other > 0 ? other : 0),
                      fmt("%.2f", double(p.factorizations) / n)});
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<const Case*> cases;
  try {
    if (!parse_args(argc, argv, o)) return 0;
    cases = select_cases(o.cases);
  } catch (const std::exception& e) {
    std::cerr << "slender_bench: " << e.what() << '\n';
    usage(std::cerr);
    return 2;
  }

  const std::string command = slender::bench::command_line(argc, argv);
  std::ostringstream head;
  head << slender::bench::machine_head();
  head << "repeats: " << o.repeats << " (model built once per repeat, untimed; only the steps "
       << "are timed)\n";
  std::cout << head.str() << std::flush;

  std::vector<CaseResult> results;
  int failures = 0;
  for (const Case* c : cases) {
    try {
      results.push_back(run_case(*c, o));
      if (!results.back().ok) ++failures;
    } catch (const std::exception& e) {
      std::cerr << "slender_bench: " << c->id << ": " << e.what() << '\n';
      ++failures;
    }
  }
  std::string solver = o.solver_arg;
  if (!results.empty()) solver = results.front().solver_name + " (--solver " + o.solver_arg + ")";

  std::cout << "linear solver: " << solver << "\n\n";
  const Table t = main_table(results);
  const Table p = phase_table(results);
  print_text(std::cout, t);
  std::cout << "\nper-step phase times of the median run [ms/step] (* includes its residual "
               "evaluations, which frames/eval/assemble count too; other = wall - frames - eval "
               "- assemble - factor - solve):\n";
  print_text(std::cout, p);
  std::cout
      << "\nanchors: S1-S4 DisMech C++ on the project's reference machine (single core, "
         "implicit midpoint, MKL Pardiso), not re-run here; S1-2d and S2-2d half of S1 and S2's "
         "(DisMech's 2D runs cost about half of its 3D ones, issue 53), not measured; "
         "S6 Py-DiSMech paper "
         "(Ryzen 9 9950X); S7 Cosserat shooting method paper, per 10 ms step. "
         "anchor/median > 1 means Slender is faster.\n";

  if (!o.markdown.empty()) {
    std::ofstream md =
        slender::bench::open_markdown(o.markdown, "slender_bench", command, head.str());
    if (!md) return 1;
    md << "- linear solver: " << solver << "\n\n";
    print_markdown(md, t);
    md << "\nPer-step phase times of the median run [ms/step]. * The line search's residual "
          "evaluations are counted both there and in frames/eval/assemble; other = wall - frames "
          "- eval - assemble - factor - solve.\n\n";
    print_markdown(md, p);
    if (!slender::bench::close_markdown(md, o.markdown, "slender_bench")) return 1;
  }
  return failures == 0 ? 0 : 1;
}
