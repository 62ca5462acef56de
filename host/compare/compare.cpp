// Backend comparison: both backends from the model's initial state, timed and compared.

#include "slender/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "slender/core/error.h"

namespace slender {

namespace {

// the largest |b_i - a_i| (NaN where one is NaN); a and b of one size
Real max_abs_difference(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const Real d = std::fabs(b[i] - a[i]);
    if (!(d <= diff)) diff = d;  // NaN propagates
  }
  return diff;
}

Real max_abs(const std::vector<Real>& a) {
  Real m = 0;
  for (const Real x : a)
    m = std::max(m, std::fabs(x));
  return m;
}

// diff over scale: 0 when nothing differs, infinite when only the scale is 0
Real relative(Real diff, Real scale) {
  if (diff == 0) return 0;
  return scale > 0 ? diff / scale : INFINITY;
}

}  // namespace

Real max_relative_difference(const std::vector<Real>& a, const std::vector<Real>& b) {
  if (a.size() != b.size()) return NAN;
  return relative(max_abs_difference(a, b), max_abs(a));
}

namespace {

BackendRun run_backend(const std::shared_ptr<const Model>& model,
                       int steps,
                       LinearSolverKind solver,
                       BackendKind backend,
                       bool phase_timing,
                       const State* start) {
  BackendRun r;
  std::unique_ptr<Simulator> sim;
  try {
    sim = std::make_unique<Simulator>(model, model->scene.integrator, solver, backend);
    if (start) sim->set_state(*start);
  } catch (const Error& e) {
    r.error = e.what();
    return r;
  }
  r.available = true;
  r.solver = sim->linear_solver_name();
  sim->set_phase_timing(phase_timing);
  r.ok = true;
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    const StepReport rep = sim->step();
    if (!rep.ok()) {
      r.ok = false;
      r.error = std::string("step ") + std::to_string(k + 1) + " failed: " + to_string(rep.status);
      break;
    }
    ++r.steps;
    r.step_iterations.push_back(rep.iterations);
  }
  // (every CUDA step ends with a synchronizing read, so the loop's time is the device's too)
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.state = sim->state();
  r.times = sim->phase_times();
  return r;
}

}  // namespace

CompareResult compare_backends(std::shared_ptr<const Model> model,
                               int steps,
                               LinearSolverKind solver,
                               bool phase_timing,
                               const State* start) {
  SLENDER_CHECK(model != nullptr, "compare_backends needs a model");
  SLENDER_CHECK(steps > 0, "compare_backends needs at least one step, got ", steps);
  CompareResult c;
  c.steps = steps;
  c.cpu = run_backend(model, steps, solver, BackendKind::kCpu, phase_timing, start);
  c.cuda = run_backend(model, steps, solver, BackendKind::kCuda, phase_timing, start);
  if (c.cpu.available && c.cuda.available && c.cpu.steps == c.cuda.steps) {
    c.iteration_mismatches = 0;
    for (size_t k = 0; k < c.cpu.step_iterations.size(); ++k)
      c.iteration_mismatches += c.cpu.step_iterations[k] != c.cuda.step_iterations[k];
    c.q_rel_diff = max_relative_difference(c.cpu.state.q, c.cuda.state.q);
    c.u_rel_diff = max_relative_difference(c.cpu.state.u, c.cuda.state.u);
    c.u_step_rel_diff =
        relative(max_abs_difference(c.cpu.state.u, c.cuda.state.u) * model->scene.integrator.dt,
                 max_abs(c.cpu.state.q));
  } else {
    c.q_rel_diff = c.u_rel_diff = c.u_step_rel_diff = NAN;
    c.iteration_mismatches = -1;
  }
  return c;
}

std::string format_comparison(const CompareResult& c) {
  std::ostringstream os;
  char line[200];
  auto row = [&](const char* name, const std::string& a, const std::string& b) {
    std::snprintf(line, sizeof line, "%-22s %16s %16s\n", name, a.c_str(), b.c_str());
    os << line;
  };
  auto num = [](double v, const char* fmt) {
    char b[64];
    std::snprintf(b, sizeof b, fmt, v);
    return std::string(b);
  };
  const BackendRun& a = c.cpu;
  const BackendRun& g = c.cuda;
  auto ms_per_step = [](const BackendRun& r, Real t) {
    return r.available && r.steps > 0 ? 1e3 * t / double(r.steps) : NAN;
  };
  auto cell = [&](const BackendRun& r, double v, const char* fmt) {
    return r.available ? num(v, fmt) : std::string("-");
  };
  row("", "cpu", "cuda");
  row("linear solver", a.available ? a.solver : "-", g.available ? g.solver : "-");
  row("steps done", cell(a, double(a.steps), "%.0f"), cell(g, double(g.steps), "%.0f"));
  row("Newton iterations", cell(a, double(a.times.newton_iters), "%.0f"),
      cell(g, double(g.times.newton_iters), "%.0f"));
  row("wall [s]", cell(a, a.wall_seconds, "%.4f"), cell(g, g.wall_seconds, "%.4f"));
  const double sa = a.wall_seconds > 0 ? a.steps / a.wall_seconds : NAN;
  const double sg = g.wall_seconds > 0 ? g.steps / g.wall_seconds : NAN;
  row("steps/s", cell(a, sa, "%.2f"), cell(g, sg, "%.2f"));
  os << "ms per step, by phase:\n";
  struct Ph {
    const char* name;
    Real PhaseTimes::*field;
  };
  const Ph phases[] = {
      {"  contact candidates", &PhaseTimes::contacts}, {"  frames", &PhaseTimes::frames},
      {"  stencil evaluation", &PhaseTimes::eval},     {"  assembly", &PhaseTimes::assemble},
      {"  factorization", &PhaseTimes::factor},        {"  solve", &PhaseTimes::solve},
      {"  line search", &PhaseTimes::line_search}};
  for (const Ph& p : phases)
    row(p.name, cell(a, ms_per_step(a, a.times.*p.field), "%.4f"),
        cell(g, ms_per_step(g, g.times.*p.field), "%.4f"));
  os << "(the line search's own evaluations count under frames, evaluation and assembly too)\n";
  if (a.available && g.available && g.wall_seconds > 0 && a.steps == g.steps) {
    os << "speed-up (cpu wall / cuda wall): " << num(a.wall_seconds / g.wall_seconds, "%.2f")
       << "x\n";
    os << "max relative difference of the states: q " << num(c.q_rel_diff, "%.3e") << ", u "
       << num(c.u_rel_diff, "%.3e") << ", u dt / |q| " << num(c.u_step_rel_diff, "%.3e") << '\n';
    os << "steps with different Newton iteration counts: " << c.iteration_mismatches << " of "
       << a.steps << '\n';
  }
  if (!a.error.empty()) os << "cpu: " << a.error << '\n';
  if (!g.error.empty()) os << "cuda: " << g.error << '\n';
  return os.str();
}

}  // namespace slender
