// slender_shell_bench: the shell plate benchmark of the shells issue.
//
// A square plate (side 1 m, thickness 1 mm, rho 1000 kg/m^3, E 1e7 Pa, nu 0.3) in the x-y
// plane, clamped along its edge y = 0 (the first two node rows of the lattice are fixed, so the
// support carries a moment), falls under gravity (0, 0, -9.81) and swings down; implicit Euler,
// dt = 0.01 s, 1 s of simulated time (100 steps), Slender's default Newton tolerances. The mesh is
// SceneBuilder::rectangle_shell's unstructured (near equilateral) lattice, its edge length
// chosen so that the triangle count is as close as the lattice allows to the requested size.
//
// For each size and bending model (dihedral hinges, mid-edge normals) the model is built once
// per repeat outside the timed region; only the stepping loop is timed. The table gives
// triangles, DOF (free), min/median/max wall time over the repeats, Newton iterations per step,
// ms per step, and the phase breakdown of Simulator::phase_times() of the median run.
//
//   slender_shell_bench [--sizes 2k,20k,200k] [--bending hinge,midedge] [--repeats N]
//                       [--budget S] [--max-seconds S] [--duration T] [--dt DT]
//                       [--solver auto|cholmod|eigen-ldlt|sparse-lu] [--markdown FILE]
//
// --max-seconds S cuts a run short after the step during which its stepping time passed S
// seconds; the row then gives the steps done and the time per step, and "1 s sim" is the
// extrapolated time for the whole run (marked ~). --budget S stops repeating a case once its
// runs so far took S seconds (at least one run; default: no limit).

#include <sys/resource.h>

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
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/simulator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using slender::bench::cpu_model;
using slender::bench::fmt;
using slender::bench::loadavg;
using slender::bench::omp_threads;
using slender::bench::option_count;
using slender::bench::option_number;
using slender::bench::option_value;
using slender::bench::parse_size;
using slender::bench::print_markdown;
using slender::bench::print_text;
using slender::bench::split;
using slender::bench::Table;

using slender::Real;

// the plate
constexpr Real kSide = 1.0;      // [m]
constexpr Real kThick = 1e-3;    // [m]
constexpr Real kRho = 1000;      // [kg/m^3]
constexpr Real kE = 1e7;         // [Pa]
constexpr Real kNu = 0.3;        // [-]
constexpr Real kGravity = 9.81;  // [m/s^2]
constexpr int kClampRows = 2;    // node rows fixed along y = 0

struct Options {
  std::vector<long> sizes = {2000, 20000, 200000};
  std::vector<std::string> size_names = {"2k", "20k", "200k"};
  std::vector<slender::ShellBending> bending = {slender::ShellBending::kHinge,
                                                slender::ShellBending::kMidEdge};
  int repeats = 5;
  double budget = 0;       // per-case wall budget for repeats [s]; 0: none
  double max_seconds = 0;  // cut a run after this much stepping time [s]; 0: never
  Real duration = 1.0;
  Real dt = 1e-2;
  slender::LinearSolverKind solver = slender::LinearSolverKind::kAuto;
  std::string solver_arg = "auto";
  std::string markdown;
};

struct Mesh {
  int nu = 0, nv = 0;
  Real edge = 0;
  long triangles = 0;
};

// the rectangle_shell lattice: nu = round(side / L) cells per row, nv = round(side / (L sqrt3/2))
// rows, nv (2 nu + 1) triangles; pick nu (L = side / nu) for the count closest to the target
Mesh mesh_for(long target) {
  Mesh best;
  long best_err = -1;
  for (int nu = 1; nu < 100000; ++nu) {
    const Real L = kSide / nu;
    const int nv = std::max(1, int(std::lround(kSide / (L * std::sqrt(3.0) / 2))));
    const long tri = long(nv) * (2L * nu + 1);
    const long err = std::labs(tri - target);
    if (best_err < 0 || err < best_err) {
      best = {nu, nv, L, tri};
      best_err = err;
    }
    if (tri > 2 * target) break;
  }
  return best;
}

const char* bending_name(slender::ShellBending b) {
  return b == slender::ShellBending::kHinge ? "hinge" : "midedge";
}

struct Case {
  std::string size_name;
  long target = 0;
  slender::ShellBending bending = slender::ShellBending::kHinge;
  std::string id() const { return size_name + "-" + bending_name(bending); }
};

slender::SceneSpec make_scene(const Mesh& mesh, slender::ShellBending bending, const Options& o) {
  slender::SceneBuilder b;
  b.name("shell_plate");
  const int mat = b.material("soft", kRho, kE, kNu);
  const int s = b.rectangle_shell("plate", slender::vec3(0, 0, 0), slender::vec3(kSide, 0, 0),
                                  slender::vec3(0, kSide, 0), mesh.edge, /*structured=*/false, mat,
                                  kThick, bending);
  b.membrane(s, slender::MembraneModel::kSprings);
  const std::vector<slender::Vec3> nodes = b.part(s).nodes;  // copy: fix_node may touch parts
  const Real ymax = (kClampRows - 1) * kSide / mesh.nv + 1e-9;
  for (int i = 0; i < int(nodes.size()); ++i)
    if (nodes[i][1] <= ymax) b.fix_node(s, i);
  b.gravity(slender::vec3(0, 0, -kGravity));
  b.integrator().kind = slender::IntegratorKind::kImplicitEuler;
  b.integrator().dt = o.dt;
  b.integrator().duration = o.duration;
  return b.build();
}

struct RunOutcome {
  bool ok = true;
  bool cut = false;     // stopped by --max-seconds
  std::string failure;  // why the run stopped
  double wall = 0;      // [s], stepping only
  double build = 0;     // [s], build_model + Simulator construction (untimed in wall)
  long steps = 0;
  long newton_iters = 0;
  int max_iters = 0;      // most Newton iterations in one step
  long lu_fallbacks = 0;  // factorizations that fell back to sparse LU
  Real far_z = 0;         // mean z of the free edge y = side at the end [m]
  slender::PhaseTimes phases;
  std::string solver_name;
};

struct CaseResult {
  Case c;
  bool ok = true;
  bool cut = false;
  std::string failure;
  long triangles = 0;
  int nnode = 0, ndof = 0, nfree = 0, nxi = 0, nhinge = 0;
  long nnz = 0;     // nonzeros of the free-DOF Jacobian (full symmetric pattern)
  long nsteps = 0;  // steps of a whole run
  long steps = 0;   // steps done by the median run
  int runs = 0;
  double iters_per_step = 0;
  int max_iters = 0;
  long lu_fallbacks = 0;  // of the median run
  double wmin = 0, wmed = 0, wmax = 0;
  double ms_step = 0;  // median run's wall / steps [ms]
  double ms_iter = 0;  // median run's wall / Newton iterations [ms]
  double build = 0;    // median build time [s]
  Real far_z = 0;
  std::string solver_name;
  slender::PhaseTimes phases;  // of the median run
};

void usage(std::ostream& os) {
  os << "usage: slender_shell_bench [--sizes 2k,20k,200k] [--bending hinge,midedge] "
        "[--repeats N] [--budget S] [--max-seconds S] [--duration T] [--dt DT] "
        "[--solver auto|cholmod|eigen-ldlt|sparse-lu] [--markdown FILE]\n"
        "--sizes: target triangle counts (k = 1000, m = 1e6)\n"
        "--max-seconds S: cut each run after S seconds of stepping; report steps done and the "
        "time per step (the whole run extrapolated)\n"
        "--budget S: stop repeating a case once its runs took S seconds (at least one run)\n";
}

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return option_value(argc, argv, i); };
    auto number = [&] { return option_number(argc, argv, i); };
    if (a == "--sizes") {
      o.sizes.clear();
      o.size_names.clear();
      for (const std::string& s : split(value())) {
        o.sizes.push_back(parse_size(s));
        o.size_names.push_back(s);
      }
      if (o.sizes.empty()) throw std::runtime_error("--sizes: no size given");
    } else if (a == "--bending") {
      o.bending.clear();
      for (const std::string& s : split(value())) {
        if (s == "hinge") {
          o.bending.push_back(slender::ShellBending::kHinge);
        } else if (s == "midedge" || s == "mid_edge" || s == "mid-edge") {
          o.bending.push_back(slender::ShellBending::kMidEdge);
        } else {
          throw std::runtime_error("--bending: unknown model '" + s + "' (hinge, midedge)");
        }
      }
      if (o.bending.empty()) throw std::runtime_error("--bending: no model given");
    } else if (a == "--repeats") {
      o.repeats = option_count(argc, argv, i);
    } else if (a == "--budget") {
      o.budget = number();
      if (o.budget < 0) throw std::runtime_error("--budget must be >= 0");
    } else if (a == "--max-seconds") {
      o.max_seconds = number();
      if (o.max_seconds < 0) throw std::runtime_error("--max-seconds must be >= 0");
    } else if (a == "--duration") {
      o.duration = number();
      if (!(o.duration > 0)) throw std::runtime_error("--duration must be > 0");
    } else if (a == "--dt") {
      o.dt = number();
      if (!(o.dt > 0)) throw std::runtime_error("--dt must be > 0");
    } else if (a == "--solver") {
      o.solver_arg = value();
      o.solver = slender::bench::parse_solver(o.solver_arg);
    } else if (a == "--markdown") {
      o.markdown = value();
    } else if (a == "-h" || a == "--help") {
      usage(std::cout);
      return false;
    } else {
      throw std::runtime_error("unknown argument '" + a + "'");
    }
  }
  return true;
}

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // Linux: KiB
}

RunOutcome run_once(const slender::SceneSpec& scene, const Options& o) {
  RunOutcome r;
  const auto b0 = std::chrono::steady_clock::now();
  const std::shared_ptr<const slender::Model> model = slender::build_model(scene);
  slender::Simulator sim(model, scene.integrator, o.solver);
  r.build = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
  r.solver_name = sim.linear_solver_name();
  const Real dt = scene.integrator.dt;
  const long nsteps = long(std::ceil(scene.integrator.duration / dt - 1e-9));

  const auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < nsteps; ++s) {
    const auto s0 = std::chrono::steady_clock::now();
    const slender::StepReport rep = sim.step();
    const double step_wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    if (step_wall > 5)  // progress of big cases, in case the run is killed
      std::fprintf(stderr, "    step %ld: %d Newton iterations, %.1f s\n", s + 1, rep.iterations,
                   step_wall);
    r.newton_iters += rep.iterations;
    r.max_iters = std::max(r.max_iters, rep.iterations);
    if (!rep.ok()) {
      r.ok = false;
      r.failure = "step " + std::to_string(s + 1) + " at t = " + fmt("%.6g", sim.state().time) +
                  ": " + slender::to_string(rep.status) + " after " +
                  std::to_string(rep.iterations) + " iterations (residual " +
                  fmt("%.3g", rep.residual) + ", first " + fmt("%.3g", rep.residual0) + ")";
      break;
    }
    ++r.steps;
    if (o.max_seconds > 0 && s + 1 < nsteps &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
            o.max_seconds) {
      r.cut = true;
      break;
    }
  }
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // mean z of the free edge (the last node row, y = side)
  Real z = 0;
  int count = 0;
  for (int n = 0; n < model->nnode; ++n) {
    if (model->node_x0[3 * n + 1] < kSide - 1e-9) continue;
    z += sim.state().q[model->node_dof(n) + 2];
    ++count;
  }
  r.far_z = count > 0 ? z / count : 0;
  r.lu_fallbacks = sim.state().warn_linear_fallback;
  r.phases = sim.phase_times();
  return r;
}

CaseResult run_case(const Case& c, const Options& o) {
  CaseResult res;
  res.c = c;
  const Mesh mesh = mesh_for(c.target);
  const slender::SceneSpec scene = make_scene(mesh, c.bending, o);
  res.nsteps = long(std::ceil(o.duration / o.dt - 1e-9));
  std::vector<RunOutcome> runs;
  double spent = 0;
  for (int k = 0; k < o.repeats; ++k) {
    if (k == 0) {
      const std::shared_ptr<const slender::Model> m = slender::build_model(scene);
      res.triangles = m->ntri;
      res.nnode = m->nnode;
      res.ndof = m->ndof;
      res.nfree = m->plan.nfree;
      res.nxi = m->nxi;
      res.nhinge = m->nhinge;
      res.nnz = long(m->plan.col.size());
      std::fprintf(stderr,
                   "%s: L = %.5g m (nu %d, nv %d), %ld triangles, %d nodes, %d DOF (%d free), "
                   "%d hinges, %d xi, Jacobian nnz %ld\n",
                   c.id().c_str(), double(mesh.edge), mesh.nu, mesh.nv, res.triangles, res.nnode,
                   res.ndof, res.nfree, res.nhinge, res.nxi, res.nnz);
    }
    runs.push_back(run_once(scene, o));
    const RunOutcome& r = runs.back();
    spent += r.wall + r.build;
    std::fprintf(stderr,
                 "  %s run %d/%d: %.3f s, %ld steps, %.2f it/step, %.1f ms/step, build %.2f s, "
                 "LU fallbacks %ld, far edge z %.4f m%s%s, peak RSS %.0f MiB\n",
                 c.id().c_str(), k + 1, o.repeats, r.wall, r.steps,
                 r.steps > 0 ? double(r.newton_iters) / double(r.steps) : 0.0,
                 r.steps > 0 ? 1e3 * r.wall / double(r.steps) : 0.0, r.build, r.lu_fallbacks,
                 double(r.far_z), r.cut ? " (cut by --max-seconds)" : "", r.ok ? "" : " (FAILED)",
                 peak_rss_mib());
    if (!r.ok) {
      res.ok = false;
      res.failure = r.failure;
      std::fprintf(stderr, "  %s: %s\n", c.id().c_str(), r.failure.c_str());
      break;
    }
    if (o.budget > 0 && spent >= o.budget && k + 1 < o.repeats) {
      std::fprintf(stderr, "  %s: budget of %.0f s spent, %d of %d repeats\n", c.id().c_str(),
                   o.budget, k + 1, o.repeats);
      break;
    }
  }
  res.runs = int(runs.size());
  // order by time per step, so that runs cut short compare fairly with whole ones
  auto per_step = [](const RunOutcome& r) {
    return r.steps > 0 ? r.wall / double(r.steps) : r.wall;
  };
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return per_step(runs[a]) < per_step(runs[b]); });
  const RunOutcome& med = runs[order[order.size() / 2]];
  res.wmin = runs[order.front()].wall;
  res.wmax = runs[order.back()].wall;
  res.wmed =
      order.size() % 2 == 1 ? med.wall : 0.5 * (runs[order[order.size() / 2 - 1]].wall + med.wall);
  res.steps = med.steps;
  res.ms_step = med.steps > 0 ? 1e3 * med.wall / double(med.steps) : 0;
  if (order.size() % 2 == 0 && med.steps > 0) {
    const RunOutcome& lo = runs[order[order.size() / 2 - 1]];
    if (lo.steps > 0) res.ms_step = 0.5 * (res.ms_step + 1e3 * lo.wall / double(lo.steps));
  }
  res.ms_iter = med.newton_iters > 0 ? 1e3 * med.wall / double(med.newton_iters) : 0;
  res.iters_per_step = med.steps > 0 ? double(med.newton_iters) / double(med.steps) : 0;
  for (const RunOutcome& r : runs) {
    res.max_iters = std::max(res.max_iters, r.max_iters);
    res.cut = res.cut || r.cut;
  }
  std::vector<double> builds;
  for (const RunOutcome& r : runs)
    builds.push_back(r.build);
  std::sort(builds.begin(), builds.end());
  res.build = builds[builds.size() / 2];
  res.far_z = med.far_z;
  res.lu_fallbacks = med.lu_fallbacks;
  res.phases = med.phases;
  res.solver_name = med.solver_name;
  return res;
}

Table main_table(const std::vector<CaseResult>& results) {
  Table t;
  t.head = {"case",
            "triangles",
            "DOF (free)",
            "Jacobian nnz",
            "steps",
            "runs",
            "Newton it/step (max)",
            "min [s]",
            "median [s]",
            "max [s]",
            "ms/step",
            "ms/Newton it",
            "1 s sim [s]",
            "build [s]",
            "far edge z(T) [m]"};
  for (const CaseResult& r : results) {
    std::string steps = std::to_string(r.steps);
    if (r.steps < r.nsteps) steps += "/" + std::to_string(r.nsteps);
    if (r.cut) steps += " (cut)";
    if (!r.ok) steps += " FAILED";
    const double whole = 1e-3 * r.ms_step * double(r.nsteps);
    t.rows.push_back({r.c.id(), std::to_string(r.triangles),
                      std::to_string(r.ndof) + " (" + std::to_string(r.nfree) + ")",
                      std::to_string(r.nnz), steps, std::to_string(r.runs),
                      fmt("%.2f", r.iters_per_step) + " (" + std::to_string(r.max_iters) + ")",
                      fmt("%.3f", r.wmin), fmt("%.3f", r.wmed), fmt("%.3f", r.wmax),
                      r.steps > 0 ? fmt("%.2f", r.ms_step) : "-",
                      r.ms_iter > 0 ? fmt("%.2f", r.ms_iter) : "-",
                      r.steps > 0 ? (r.steps < r.nsteps ? "~" : "") + fmt("%.2f", whole) : "-",
                      fmt("%.2f", r.build), r.ok && !r.cut ? fmt("%.4f", double(r.far_z)) : "-"});
  }
  return t;
}

Table phase_table(const std::vector<CaseResult>& results) {
  Table t;
  t.head = {"case",
            "solver",
            "frames",
            "eval",
            "assemble",
            "factor",
            "solve",
            "line search*",
            "other",
            "factorizations/step",
            "LU fallbacks/step"};
  for (const CaseResult& r : results) {
    const slender::PhaseTimes& p = r.phases;
    const double n = p.steps > 0 ? double(p.steps) : 1;
    const double sum = p.frames + p.eval + p.assemble + p.factor + p.solve;
    const double wall = 1e-3 * r.ms_step * n;  // the median run's stepping time
    const double other = wall - sum;
    auto ms = [&](double v) { return fmt("%.2f", 1e3 * v / n); };
    auto pct = [&](double v) { return wall > 0 ? " (" + fmt("%.0f", 100 * v / wall) + "%)" : ""; };
    t.rows.push_back({r.c.id(), r.solver_name, ms(p.frames) + pct(p.frames),
                      ms(p.eval) + pct(p.eval), ms(p.assemble) + pct(p.assemble),
                      ms(p.factor) + pct(p.factor), ms(p.solve) + pct(p.solve), ms(p.line_search),
                      ms(other > 0 ? other : 0), fmt("%.2f", double(p.factorizations) / n),
                      fmt("%.2f", double(r.lu_fallbacks) / n)});
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse_args(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "slender_shell_bench: " << e.what() << '\n';
    usage(std::cerr);
    return 2;
  }

  const std::string command = slender::bench::command_line(argc, argv);
  std::ostringstream head;
  head << slender::bench::machine_head();
  head << "scene: square plate " << kSide << " m, h = " << kThick << " m, rho = " << kRho
       << ", E = " << kE << ", nu = " << kNu << ", first " << kClampRows
       << " node rows along y = 0 fixed, gravity -" << kGravity
       << " z; implicit Euler, dt = " << o.dt << " s, duration " << o.duration
       << " s; unstructured rectangle_shell lattice; default Newton tolerances\n";
  head << "repeats: " << o.repeats;
  if (o.budget > 0) head << " (fewer once a case's runs took " << o.budget << " s)";
  head << "; model built once per repeat, untimed; only the steps are timed";
  if (o.max_seconds > 0) head << "; runs cut after " << o.max_seconds << " s of stepping";
  head << "\n";
  std::cout << head.str() << std::flush;

  std::vector<CaseResult> results;
  int failures = 0;
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    for (slender::ShellBending bend : o.bending) {
      Case c;
      c.size_name = o.size_names[i];
      c.target = o.sizes[i];
      c.bending = bend;
      try {
        results.push_back(run_case(c, o));
        if (!results.back().ok) ++failures;
      } catch (const std::exception& e) {
        std::cerr << "slender_shell_bench: " << c.id() << ": " << e.what() << '\n';
        ++failures;
      }
    }
  }
  std::string solver = o.solver_arg;
  if (!results.empty()) solver = results.front().solver_name + " (--solver " + o.solver_arg + ")";

  const Table t = main_table(results);
  const Table p = phase_table(results);
  const char* main_note =
      "wall times are of the stepping loop only; ms/step and the phases are of the median run "
      "(runs ordered by time per step); \"1 s sim\" = ms/step x the steps of the whole run, "
      "~ = extrapolated from a run cut short; build = build_model + Simulator construction "
      "(median, untimed); far edge z(T) = mean z of the free edge y = 1 m at the end (0 at "
      "rest)";
  const char* phase_note =
      "per-step phase times of the median run [ms/step] (share of its wall time); * the line "
      "search's residual evaluations are counted both there and in frames/eval/assemble; other "
      "= wall - frames - eval - assemble - factor - solve; LU fallbacks = factorizations where "
      "the Cholesky factorization failed (Jacobian not positive definite) and sparse LU "
      "(UMFPACK, else Eigen SparseLU) was used instead, both counted in factor";
  std::cout << "\nlinear solver: " << solver << "\n\n";
  print_text(std::cout, t);
  std::cout << '\n' << main_note << "\n\n" << phase_note << ":\n";
  print_text(std::cout, p);
  for (const CaseResult& r : results)
    if (!r.ok) std::cout << "\n" << r.c.id() << " FAILED: " << r.failure << '\n';
  const std::string load_end = loadavg();
  std::cout << "peak RSS: " << fmt("%.0f", peak_rss_mib())
            << " MiB; load average at end: " << load_end << '\n';

  if (!o.markdown.empty()) {
    std::ofstream md =
        slender::bench::open_markdown(o.markdown, "slender_shell_bench", command, head.str());
    if (!md) return 1;
    md << "- linear solver: " << solver << "\n";
    md << "- peak RSS: " << fmt("%.0f", peak_rss_mib()) << " MiB; load average at end: " << load_end
       << "\n\n";
    print_markdown(md, t);
    md << "\n" << main_note << ".\n\n" << phase_note << ".\n\n";
    print_markdown(md, p);
    for (const CaseResult& r : results)
      if (!r.ok) md << "\n" << r.c.id() << " FAILED: " << r.failure << "\n";
    if (!slender::bench::close_markdown(md, o.markdown, "slender_shell_bench")) return 1;
  }
  return failures == 0 ? 0 : 1;
}
