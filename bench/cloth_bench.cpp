// slender_cloth_bench: S9 of BENCHMARKS.md, a large shell with self-contact, on the CPU backend or
// (--backend cuda) the CUDA backend.
//
// The scene is apps/scenes/cloth_drop.json (Py-DiSMech Fig. 11) built in code with a finer
// disk: a circular cloth of radius 0.3 m, h = 2 mm, rho = 1000 kg/m^3, E = 2 MPa (--E), nu = 0.3,
// hinge bending, its centre node and first ring fixed 0.25 m above a frictionless ground,
// tilted by 5.4 degrees (normal [0.08, 0.05, 1]); gravity, mass-proportional damping 5/s,
// shell-shell self-contact (contact distance h, tolerance 1 mm, automatic stiffness), implicit
// Euler at dt = 1 ms with Slender's default Newton tolerances. The disk has nr rings and
// 6 nr^2 triangles; nr is chosen for the triangle count nearest each requested size (2k: 18
// rings, 1944 triangles; 20k: 58 rings, 20184 triangles).
//
// Each case runs a fixed number of steps from rest (--steps, one per size; by default 450 at 2k:
// the hem reaches the ground at about 0.27 s, the folds press on each other from about 0.35 s
// (up to 59 triangle pairs in contact at 0.4 s) and open again by 0.5 s; 5 at 20k, only the
// start of the fall). The model is built once per size and a simulator per repeat; only the
// calls of Simulator::step() count in the wall times, and the set-up is timed apart (the scene
// and build_model; the simulator's construction). Every --probe-every steps and at the end
// (untimed; --probe-every 0: never, which spares a large cloth's set-up-sized probe) the
// clearance probe counts the triangle pairs in contact and measures the smallest clearance
// between triangles that share no node and are no rest neighbours (the no-tunnelling check of the
// tests; a fine cloth's in-plane neighbours within contact range at rest are left out, as the
// contact model leaves them out). The table gives triangles, DOF (free), min/median/max wall
// time, steps/s and Newton iterations/s of the median run, the set-up times, and the phase
// breakdown of Simulator::phase_times(); "other" is mostly the per-step
// contact update (broad phase, sub-pair lists, the assembly plan and the solver's analysis for
// the new pattern).
//
//   slender_cloth_bench [--sizes 2k,20k] [--steps 450,5] [--repeats N] [--max-seconds S]
//                       [--probe-every N] [--E PA]
//                       [--solver auto|cholmod|eigen-ldlt|sparse-lu|pcg|amg]
//                       [--backend cpu|cuda] [--inexact] [--markdown FILE]
//                       [--compare N [--compare-after W]]
//
// --inexact: each Newton direction solved by the iterative solvers only as accurately as the
// iteration can use (the scene's integrator.newton.inexact; core/newton.h's newton_forcing).
//
// --compare N: instead of the timings, the CPU and CUDA backends side by side (compare_backends)
// for N steps of each size, from rest or, with --compare-after W, from the state the CPU reaches
// after W steps (for example in the fold, contact active): the largest relative difference of
// the states, the steps whose Newton counts differ, and whether they agree to 1e-8 (issue 21);
// the exit code says so.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cloth_scene.h"
#include "contact/clearance.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace {

using slender::Real;
using slender::bench::fmt;

using namespace slender::bench::cloth;  // the scene's constants

struct Options {
  std::vector<long> sizes = {2000, 20000};
  std::vector<std::string> size_names = {"2k", "20k"};
  std::vector<long> steps = {450, 5};
  int repeats = 5;
  double max_seconds = 0;  // cut a run after this much stepping [s]; 0: never
  long probe_every = 10;   // clearance measured every this many steps (untimed); 0: never
  Real E = 2e6;
  slender::LinearSolverKind solver = slender::LinearSolverKind::kAuto;
  std::string solver_arg = "auto";
  slender::BackendKind backend = slender::BackendKind::kCpu;
  std::string markdown;
  long compare = 0, compare_after = 0;  // --compare N, --compare-after W
  bool inexact = false;                 // --inexact: inexact Newton (NewtonSpec::inexact)
};

slender::SceneSpec make_scene(int rings, const Options& o) {
  slender::SceneSpec s = slender::bench::cloth::make_scene(rings, o.E);
  s.integrator.newton.inexact = o.inexact;
  return s;
}

struct RunOutcome {
  bool ok = true, cut = false, probed = false;
  std::string failure;
  double wall = 0;   // [s], stepping only
  double setup = 0;  // [s], the simulator's construction (untimed in wall)
  long steps = 0, newton_iters = 0;
  int max_iters = 0;
  long lu_fallbacks = 0;
  slender::PhaseTimes phases;
  slender::contact::Clearance clearance;  // at the end
  long max_touching = 0;                  // most triangle pairs in contact at one probe
  Real min_self = INFINITY;               // smallest clearance over the probes [m]
  long crossing = 0;                      // probes that found intersecting triangles
  Real footprint = 0;  // largest horizontal distance of a node from the centre at the end [m]
  std::string solver_name;
};

RunOutcome run_once(const std::shared_ptr<const slender::Model>& model,
                    const slender::SceneSpec& scene,
                    long nsteps,
                    const Options& o) {
  RunOutcome r;
  const auto t0 = std::chrono::steady_clock::now();
  slender::Simulator sim(model, scene.integrator, o.solver, o.backend);
  r.setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.solver_name = sim.linear_solver_name();
  // (before the first step: a big case that never finishes one still says where its time went)
  std::fprintf(stderr, "    simulator set up in %.2f s (%s)\n", r.setup, r.solver_name.c_str());
  slender::contact::ClearanceProbe probe;
  slender::contact::ClearanceOptions co;
  co.search = kThick;
  co.touch = kThick + kTol;
  co.skip_rest_neighbours = true;  // as the contact model does (a fine cloth's own neighbours)
  auto measure = [&] {
    r.clearance = probe.measure(*model, sim.state().q, co);
    r.probed = true;
    r.max_touching = std::max(r.max_touching, r.clearance.touching);
    r.min_self = std::min(r.min_self, r.clearance.self);
    if (r.clearance.crossing > 0) ++r.crossing;
  };
  for (long s = 0; s < nsteps; ++s) {
    const auto s0 = std::chrono::steady_clock::now();
    const slender::StepReport rep = sim.step();
    const double step_wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    r.wall += step_wall;
    if (step_wall > 5)  // progress of big cases, in case the run is killed
      std::fprintf(stderr, "    step %ld: %d Newton iterations, %.1f s\n", s + 1, rep.iterations,
                   step_wall);
    r.newton_iters += rep.iterations;
    r.max_iters = std::max(r.max_iters, rep.iterations);
    if (!rep.ok()) {
      r.ok = false;
      r.failure = "step " + std::to_string(s + 1) + ": " + slender::to_string(rep.status) +
                  " after " + std::to_string(rep.iterations) + " iterations (residual " +
                  fmt("%.3g", rep.residual) + ")";
      break;
    }
    ++r.steps;
    if (o.probe_every > 0 && (s + 1) % o.probe_every == 0) measure();
    if (o.max_seconds > 0 && s + 1 < nsteps && r.wall > o.max_seconds) {
      r.cut = true;
      break;
    }
  }
  if (o.probe_every > 0) measure();
  r.lu_fallbacks = sim.state().warn_linear_fallback;
  r.phases = sim.phase_times();
  for (int n = 0; n < model->nnode; ++n)
    r.footprint = std::max(r.footprint, std::hypot(sim.state().q[3 * n], sim.state().q[3 * n + 1]));
  return r;
}

struct CaseResult {
  std::string name;
  int rings = 0, ntri = 0, ndof = 0, nfree = 0;
  long nsteps = 0;
  double build = 0;              // [s] the scene and the model (build_model)
  std::vector<RunOutcome> runs;  // sorted by time per step
  const RunOutcome& median() const { return runs[runs.size() / 2]; }
};

CaseResult run_case(const std::string& name, long target, long nsteps, const Options& o) {
  CaseResult c;
  c.name = name;
  c.nsteps = nsteps;
  c.rings = rings_for(target);
  const auto t0 = std::chrono::steady_clock::now();
  const slender::SceneSpec scene = make_scene(c.rings, o);
  const std::shared_ptr<const slender::Model> model = slender::build_model(scene);
  c.build = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.ntri = model->ntri;
  c.ndof = model->ndof;
  c.nfree = model->plan.nfree;
  std::fprintf(stderr,
               "%s: %d rings, %d triangles, %d DOF (%d free), %ld steps; model built in %.2f s\n",
               name.c_str(), c.rings, c.ntri, c.ndof, c.nfree, nsteps, c.build);
  for (int k = 0; k < o.repeats; ++k) {
    c.runs.push_back(run_once(model, scene, nsteps, o));
    const RunOutcome& r = c.runs.back();
    std::fprintf(stderr,
                 "  run %d/%d: set-up %.2f s, %.2f s, %ld steps, %.2f it/step, contact pairs max "
                 "%ld (end %ld), min clearance %.3e m, footprint %.4f m, LU fallbacks %ld%s%s\n",
                 k + 1, o.repeats, r.setup, r.wall, r.steps,
                 r.steps > 0 ? double(r.newton_iters) / double(r.steps) : 0.0, r.max_touching,
                 r.clearance.touching, double(r.min_self), double(r.footprint), r.lu_fallbacks,
                 r.cut ? " (cut)" : "", r.ok ? "" : (" FAILED: " + r.failure).c_str());
    if (!r.ok) break;
  }
  auto per_step = [](const RunOutcome& r) { return r.wall / double(std::max(r.steps, 1L)); };
  std::sort(c.runs.begin(), c.runs.end(),
            [&](const RunOutcome& a, const RunOutcome& b) { return per_step(a) < per_step(b); });
  return c;
}

slender::bench::Table main_table(const std::vector<CaseResult>& cases) {
  slender::bench::Table t;
  t.head = {"case",
            "triangles",
            "DOF (free)",
            "steps",
            "runs",
            "min [s]",
            "median [s]",
            "max [s]",
            "steps/s",
            "Newton it/step (max)",
            "Newton it/s",
            "ms/step",
            "contact pairs max (end)",
            "min clearance [mm]",
            "footprint [m]",
            "model build [s]",
            "set-up [s]"};
  for (const CaseResult& c : cases) {
    const RunOutcome& m = c.median();
    std::string steps = std::to_string(m.steps);
    if (m.steps < c.nsteps) steps += "/" + std::to_string(c.nsteps);
    if (m.cut) steps += " (cut)";
    if (!m.ok) steps += " FAILED";
    const double w = std::max(m.wall, 1e-9);
    t.rows.push_back(
        {c.name, std::to_string(c.ntri),
         std::to_string(c.ndof) + " (" + std::to_string(c.nfree) + ")", steps,
         std::to_string(c.runs.size()), fmt("%.2f", c.runs.front().wall), fmt("%.2f", m.wall),
         fmt("%.2f", c.runs.back().wall), fmt("%.2f", double(m.steps) / w),
         fmt("%.2f", double(m.newton_iters) / double(std::max(m.steps, 1L))) + " (" +
             std::to_string(m.max_iters) + ")",
         fmt("%.2f", double(m.newton_iters) / w),
         fmt("%.1f", 1e3 * w / double(std::max(m.steps, 1L))),
         std::to_string(m.max_touching) + " (" + std::to_string(m.clearance.touching) + ")",
         !m.probed ? std::string("not probed")
                   : (std::isfinite(m.min_self) ? fmt("%.3f", 1e3 * m.min_self) : "> 4") +
                         (m.crossing > 0 ? " CROSSING" : ""),
         fmt("%.4f", m.footprint), fmt("%.2f", c.build), fmt("%.2f", m.setup)});
  }
  return t;
}

slender::bench::Table phase_table(const std::vector<CaseResult>& cases) {
  slender::bench::Table t;
  t.head = {"case",  "solver", "eval",         "assemble",     "factor",
            "solve", "other",  "line search*", "LU fallbacks", "Krylov it/Newton it"};
  for (const CaseResult& c : cases) {
    const RunOutcome& m = c.median();
    const slender::PhaseTimes& p = m.phases;
    const double n = double(std::max(m.steps, 1L));
    const double other = m.wall - (p.frames + p.eval + p.assemble + p.factor + p.solve);
    auto ms = [&](double v) {
      return fmt("%.1f", 1e3 * v / n) + " (" + fmt("%.0f", 100 * v / std::max(m.wall, 1e-9)) + "%)";
    };
    t.rows.push_back({c.name, m.solver_name, ms(p.eval), ms(p.assemble), ms(p.factor), ms(p.solve),
                      ms(std::max(other, 0.0)), fmt("%.1f", 1e3 * p.line_search / n),
                      std::to_string(m.lu_fallbacks),
                      p.linear_iters > 0 ? fmt("%.1f", double(p.linear_iters) /
                                                           double(std::max(m.newton_iters, 1L)))
                                         : "-"});
  }
  return t;
}

void usage(std::ostream& os) {
  os << "usage: slender_cloth_bench [--sizes 2k,20k] [--steps 450,5] [--repeats N] "
        "[--max-seconds S] [--probe-every N] [--E PA] [--solver "
        "auto|cholmod|eigen-ldlt|sparse-lu|pcg|amg|pcg-mixed] "
        "[--backend cpu|cuda] [--inexact] [--markdown FILE] [--compare N [--compare-after W]]\n"
        "--sizes: target triangle counts (k = 1000); --steps: steps per size (one value for all, "
        "or one per size)\n";
}

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return slender::bench::option_value(argc, argv, i); };
    auto number = [&] {
      const double x = slender::bench::option_number(argc, argv, i);
      if (x < 0) throw std::runtime_error(a + " must not be negative");
      return x;
    };
    if (a == "--sizes") {
      o.sizes.clear();
      o.size_names = slender::bench::split(value());
      for (const std::string& s : o.size_names)
        o.sizes.push_back(slender::bench::parse_size(s));
    } else if (a == "--steps") {
      o.steps.clear();
      for (const std::string& s : slender::bench::split(value()))
        o.steps.push_back(slender::bench::parse_size(s));
    } else if (a == "--repeats") {
      o.repeats = slender::bench::option_count(argc, argv, i);
    } else if (a == "--max-seconds") {
      o.max_seconds = number();
    } else if (a == "--compare") {
      o.compare = slender::bench::parse_size(value());
      if (o.compare < 1) throw std::runtime_error("--compare needs at least one step");
    } else if (a == "--compare-after") {
      o.compare_after = slender::bench::parse_size(value());
    } else if (a == "--probe-every") {
      const std::string v = value();
      o.probe_every = v == "0" ? 0 : slender::bench::parse_size(v);
    } else if (a == "--E") {
      o.E = number();
      if (!(o.E > 0)) throw std::runtime_error("--E must be positive");
    } else if (a == "--solver") {
      o.solver_arg = value();
      o.solver = slender::bench::parse_solver(o.solver_arg);
    } else if (a == "--backend") {
      o.backend = slender::bench::parse_backend(value());
    } else if (a == "--markdown") {
      o.markdown = value();
    } else if (a == "--inexact") {
      o.inexact = true;
    } else if (a == "-h" || a == "--help") {
      usage(std::cout);
      return false;
    } else {
      throw std::runtime_error("unknown argument '" + a + "'");
    }
  }
  if (o.sizes.empty()) throw std::runtime_error("--sizes: no size given");
  if (o.steps.size() == 1) o.steps.assign(o.sizes.size(), o.steps.front());
  if (o.compare == 0 && o.steps.size() != o.sizes.size())
    throw std::runtime_error("--steps: give one value, or one per size");
  return true;
}

// --compare: each size's cloth on both backends from the same state (after compare_after CPU
// steps); 0 when every size agrees (states to 1e-8, the same Newton counts at every step)
int compare_cases(const Options& o) {
  int failures = 0;
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    const auto model = slender::build_model(make_scene(rings_for(o.sizes[i]), o));
    std::printf("\n%s: %d triangles, %d DOF; %ld CPU steps, then %ld steps on both backends\n",
                o.size_names[i].c_str(), model->ntri, model->ndof, o.compare_after, o.compare);
    slender::State start;
    const slender::State* from = nullptr;
    if (o.compare_after > 0) {
      slender::Simulator cpu(model, model->scene.integrator, o.solver);
      for (long k = 0; k < o.compare_after; ++k)
        if (!cpu.step().ok()) {
          std::printf("the CPU's warm-up failed at step %ld\n", k + 1);
          return 1;
        }
      start = cpu.state();
      from = &start;
    }
    const slender::CompareResult r =
        slender::compare_backends(model, int(o.compare), o.solver, false, from);
    std::cout << slender::format_comparison(r);
    const bool agree =
        r.q_rel_diff <= 1e-8 && r.u_step_rel_diff <= 1e-8 && r.iteration_mismatches == 0;
    std::printf("%s: %s\n", o.size_names[i].c_str(),
                agree ? "the backends agree (q and u dt within 1e-8, the same Newton counts)"
                      : "the backends DO NOT agree, or one did not run");
    failures += !agree;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse_args(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "slender_cloth_bench: " << e.what() << '\n';
    usage(std::cerr);
    return 2;
  }
  const std::string command = slender::bench::command_line(argc, argv);
  std::ostringstream head;
  head << slender::bench::machine_head();
  head << "scene: cloth_drop (S9), disk radius " << kRadius << " m, h = " << kThick
       << " m, rho = " << kRho << ", E = " << o.E << " Pa, nu = " << kNu
       << ", centre and first ring fixed " << kHeight << " m above the ground; self-contact "
       << "tolerance " << kTol << " m; implicit Euler, dt = " << kDt << " s; repeats " << o.repeats
       << " (model built once per size, a simulator per repeat, untimed)\n";
  std::cout << head.str() << std::flush;

  if (o.compare > 0) return compare_cases(o);
  std::vector<CaseResult> cases;
  int failures = 0;
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    try {
      cases.push_back(run_case(o.size_names[i], o.sizes[i], o.steps[i], o));
      if (!cases.back().median().ok) ++failures;
    } catch (const std::exception& e) {
      std::cerr << "slender_cloth_bench: " << o.size_names[i] << ": " << e.what() << '\n';
      ++failures;
    }
  }
  const slender::bench::Table t = main_table(cases), p = phase_table(cases);
  const char* note =
      "wall times are of the stepping loop only; steps/s, Newton it/s, ms/step and the phases "
      "are of the median run (runs ordered by time per step); contact pairs = triangle pairs "
      "closer than h + tolerance, the most at one probe and at the end; min clearance = the "
      "smallest distance between triangles sharing no node over the probes (> 4 mm: none "
      "measured; CROSSING: triangles intersected), to compare with h = 2 mm; phases in ms/step "
      "(share "
      "of the wall time); other = wall - eval - assemble - factor - solve (the per-step contact "
      "update, mostly); * the line search's evaluations are also counted in eval and assemble";
  std::cout << '\n';
  slender::bench::print_text(std::cout, t);
  std::cout << '\n';
  slender::bench::print_text(std::cout, p);
  const std::string load_end = slender::bench::loadavg();
  std::cout << '\n' << note << "\nload average at end: " << load_end << '\n';
  if (!o.markdown.empty()) {
    std::ofstream md =
        slender::bench::open_markdown(o.markdown, "slender_cloth_bench", command, head.str());
    if (!md) return 1;
    md << "- load average at end: " << load_end << "\n\n";
    slender::bench::print_markdown(md, t);
    md << '\n';
    slender::bench::print_markdown(md, p);
    md << '\n' << note << ".\n";
    if (!slender::bench::close_markdown(md, o.markdown, "slender_cloth_bench")) return 1;
  }
  return failures == 0 ? 0 : 1;
}
