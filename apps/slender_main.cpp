// slender: the command-line program.
//   slender run SCENE [--out DIR] [--duration T] [--dt DT] [--every N] [--backend cpu|cuda]
//                     [--solver auto|cholmod|eigen-ldlt|sparse-lu|pcg|banded]
//                     [--quiet] [--no-output] [--usd FILE.usda]
//   slender export-usd RUN_DIR [--out FILE.usda] [--scene SCENE] [--up-axis y|z]
//   slender info SCENE
//   slender fmu SCENE --out FILE.fmu [--outputs LIST]   (an FMI 3.0 co-simulation FMU, docs/fmu.md)
//   slender compare SCENE [--steps N] [--dt DT] [--solver ...]
//   slender render OUT_DIR [...] | plot OUT_DIR [...] | sweep SCENE --grid ... [...]
//                     (the Python package's slender.render, slender.plot, slender.sweep)
//   slender --version
// Exit codes: 0 done, 1 error (broken contract, unwritable output, ...), 2 bad input (scene or
// options), 3 the run stopped on a failed step.

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/checkpoint.h"
#include "slender/compare.h"
#include "slender/config.h"
#include "slender/core/error.h"
#include "slender/fmu.h"
#include "slender/info.h"
#include "slender/model.h"
#include "slender/record.h"
#include "slender/run.h"
#include "slender/simulator.h"

namespace {

using namespace slender;

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitInput = 2;
constexpr int kExitRunFailed = 3;
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report an interrupted program

// SIGINT (Ctrl-C) and SIGTERM during a run: the run stops after the step in progress and
// completes its outputs. A second signal does the same (`timeout -s INT` signals the program
// and then its process group, so it arrives twice); a third ends the program at once (the
// default action), leaving the unfinished files under their .part names
volatile std::sig_atomic_t g_interrupt = 0;
extern "C" void on_interrupt(int sig) {
  g_interrupt = g_interrupt + 1;
  if (g_interrupt >= 3) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

struct RunArgs {
  std::string scene;
  std::string out;
  std::string backend;  // "" = the scene's
  std::string solver = "auto";
  double duration = 0;
  double dt = 0;
  int every = 0;
  bool has_duration = false, has_dt = false, has_every = false;  // given on the command line
  bool quiet = false;
  bool no_output = false;
  long checkpoint_every = 0;  // > 0: a checkpoint every n-th step, in the output folder
  std::string resume;         // a checkpoint to continue from
  bool render = false;        // render the outputs into a video when the run ends
  std::string usd;            // a .usda to write the records into ("" = none)
  bool inexact = false;       // inexact Newton (the scene's integrator.newton.inexact)
};

struct ExportUsdArgs {
  std::string run;
  std::string out;
  std::string scene;
  std::string up_axis;  // "", "y" or "z"
  bool quiet = false;
};

// ---- the Python package's commands (render, plot, sweep) ---------------------------------------

extern "C" char** environ;

// The folder of the Python package built beside this program (build/python next to
// build/slender), or "" where there is none (an installed package is found by Python itself).
std::string python_package_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir = exe.parent_path() / "python";
  return std::filesystem::exists(dir / "slender" / "__init__.py", ec) ? dir.string() : "";
}

// Runs `python3 -m slender.<module> args...` (SLENDER_PYTHON names another interpreter) with the
// package beside this program on PYTHONPATH; returns its exit code (kExitError when it could
// not be started, or was killed).
int run_python_module(const std::string& module, const std::vector<std::string>& args) {
  const char* py = std::getenv("SLENDER_PYTHON");
  const std::string python = py && *py ? py : "python3";
  const std::string pkg = python_package_dir();
  if (!pkg.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = old && *old ? pkg + ":" + old : pkg;
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::vector<std::string> argv_s = {python, "-m", "slender." + module};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    std::cerr << "error: slender " << module << " runs the Python package (python3 -m slender."
              << module << "), but " << python << " could not be started\n";
    return kExitError;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kExitError;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitError;
}

// a stream that drops everything, for --quiet
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

// command-line values replace the scene's, so the model and the summary agree with the run
void apply_overrides(const RunArgs& a, SceneSpec& sc) {
  auto bad = [](const char* option, const std::string& why) {
    return InputError("<command line>", 0, option, why);
  };
  if (a.has_duration) {
    if (!(a.duration >= 0) || !std::isfinite(a.duration)) {
      throw bad("--duration", "must be a time of 0 s or more");
    }
    sc.integrator.duration = a.duration;
  }
  if (a.has_dt) {
    if (!(a.dt > 0) || !std::isfinite(a.dt)) throw bad("--dt", "must be a positive time step");
    sc.integrator.dt = a.dt;
  }
  // --every goes to the run's options (0, first and last state only, is not a scene value)
  if (a.has_every && a.every < 0) {
    throw bad("--every", "must be 0 (first and last state only) or more");
  }
  if (!a.out.empty()) sc.output.dir = a.out;
  if (!a.backend.empty()) backend_from_name(a.backend, sc.backend);  // checked by CLI11
  if (a.inexact) sc.integrator.newton.inexact = true;
}

// the option's value, already checked against the names by CLI11
LinearSolverKind solver_kind(const std::string& name) {
  LinearSolverKind kind = LinearSolverKind::kAuto;
  linear_solver_from_name(name, kind);
  return kind;
}

struct CompareArgs {
  std::string scene;
  std::string solver = "auto";
  int steps = 50;
  double dt = 0;
  bool has_dt = false;
};

// both backends side by side; exit 1 when the CUDA backend cannot run here (after the CPU table)
int cmd_compare(const CompareArgs& a) {
  SceneSpec sc = read_scene_file(a.scene);
  if (a.has_dt) {
    if (!(a.dt > 0) || !std::isfinite(a.dt)) {
      throw InputError("<command line>", 0, "--dt", "must be a positive time step");
    }
    sc.integrator.dt = a.dt;
  }
  if (a.steps < 1) throw InputError("<command line>", 0, "--steps", "must be 1 or more");
  std::shared_ptr<const Model> model = build_model(sc);
  std::cout << "slender compare: " << sc.name << ": " << model->plan.nfree << " free DOFs, "
            << a.steps << " steps of " << integrator_name(sc.integrator.kind)
            << ", dt = " << sc.integrator.dt << " s\n";
  const CompareResult r = compare_backends(model, a.steps, solver_kind(a.solver));
  std::cout << format_comparison(r);
  if (!r.cpu.ok || !r.cuda.ok) {
    std::cerr << "error: "
              << (!r.cuda.available ? "the CUDA backend could not run: " + r.cuda.error
                                    : std::string("a run stopped early (see above)"))
              << '\n';
    return kExitError;
  }
  return kExitOk;
}

int cmd_run(const RunArgs& a) {
  // from the start: a signal while the scene is read and the model built stops the run at its
  // first step, with its outputs begun and complete, instead of ending the program unreported;
  // and to the end: a signal that arrives after the outputs are complete must not end the
  // program before it reports them
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  if (a.render && a.no_output) {
    throw InputError("<command line>", 0, "--render",
                     "there is nothing to render with --no-output");
  }
  if (!a.usd.empty() && a.no_output) {
    throw InputError("<command line>", 0, "--usd", "--no-output writes no files, a .usda neither");
  }
  SceneSpec sc = read_scene_file(a.scene);
  apply_overrides(a, sc);
  // before the model is built: a clear answer first when CUDA cannot run here
  if (sc.backend == BackendKind::kCuda) require_cuda_backend();
  std::shared_ptr<const Model> model = build_model(sc);
  Simulator sim(model, model->scene.integrator, solver_kind(a.solver), sc.backend);

  NullBuffer null_buffer;
  std::ostream null_stream(&null_buffer);
  std::ostream& log = a.quiet ? null_stream : std::cout;
  const IntegratorSpec& in = sim.integrator();
  // (inexact Newton acts on the iterative solvers alone: said either way, never silently dropped)
  const std::string solver = sim.linear_solver_name();
  const char* inexact = !in.newton.inexact ? ""
                        : sim.inexact_newton()
                            ? ", inexact Newton"
                            : "; inexact Newton does nothing with a direct solver: "
                              "--solver pcg, pcg-mixed, amg or matrix-free";
  // (auto takes the matrix-free solver where an assembled Jacobian would not fit: said so)
  const char* why = solver_kind(a.solver) == LinearSolverKind::kAuto &&
                            solver.find("matrix-free") != std::string::npos
                        ? ": an assembled Jacobian would not fit in the memory available"
                        : "";
  log << "slender: " << sc.name << ": " << model->nnode << " nodes, " << model->nedge << " edges, "
      << model->plan.nfree << " free DOFs; " << integrator_name(in.kind) << ", dt = " << in.dt
      << " s, duration " << in.duration << " s (" << solver << why << inexact << ")\n";

  RunOptions opt;
  if (a.has_every) opt.every = a.every;
  opt.progress = !a.quiet;
  opt.write_outputs = !a.no_output;
  opt.usd_path = a.usd;
  opt.interrupt = &g_interrupt;
  RunCursor cursor;
  if (!a.resume.empty()) {
    const Real t_initial = sim.time();
    cursor = load_checkpoint(sim, a.resume);
    opt.resume = &cursor;
    // the run ends where the interrupted one would have, or at --duration from the scene's start
    // (a run taken further than the one that wrote the checkpoint)
    if (a.has_duration) {
      cursor.t_end = t_initial + a.duration;
      auto num = [](Real v) {
        std::ostringstream o;
        o << v;
        return o.str();
      };
      if (!(cursor.t_end > sim.time())) {
        throw InputError("<command line>", 0, "--duration",
                         "the checkpoint " + a.resume + " is at t = " + num(sim.time()) +
                             " s, at or past the end of a run of " + num(a.duration) +
                             " s: nothing to resume");
      }
    }
    log << "slender: resumed from " << a.resume << " at t = " << sim.time() << " s, step "
        << cursor.steps << '\n';
  }
  if (a.checkpoint_every < 0) {
    throw InputError("<command line>", 0, "--checkpoint-every",
                     "must be 0 or more, got " + std::to_string(a.checkpoint_every));
  }
  if (a.checkpoint_every > 0) {
    // the output folder (--out is the scene's by now), made even when --no-output
    const std::filesystem::path dir(model->scene.output.dir.empty() ? "."
                                                                    : model->scene.output.dir);
    std::filesystem::create_directories(dir);
    opt.checkpoint_every = a.checkpoint_every;
    opt.checkpoint_path = (dir / "checkpoint.slck").string();
  }
  const RunResult r = run_simulation(sim, opt, log);
  if (r.interrupted) {
    std::cerr << "slender: " << r.message << '\n';
    for (const std::string& f : r.files)
      std::cerr << "  wrote " << f << '\n';
    return kExitInterrupted;
  }
  if (!r.ok) {
    std::cerr << "error: " << r.message << '\n';
    for (const std::string& f : r.files)
      std::cerr << "  wrote " << f << '\n';
    return kExitRunFailed;
  }
  log << r.message << '\n';
  for (const std::string& f : r.files)
    log << "  " << f << '\n';
  if (a.render) {
    // the video of the run's frames, with the scene's ground (docs/rendering.md)
    const std::string dir = model->scene.output.dir.empty() ? "." : model->scene.output.dir;
    std::vector<std::string> args = {dir, "--scene", a.scene};
    if (a.quiet) args.push_back("-q");
    const int rc = run_python_module("render", args);
    if (rc != 0) {
      std::cerr << "error: the run's outputs are written, but rendering them failed (exit code "
                << rc << ")\n";
      return kExitError;
    }
  }
  return kExitOk;
}

// a run's VTK series into one .usda
int cmd_export_usd(const ExportUsdArgs& a) {
  UsdExportOptions opt;
  opt.out = a.out;
  opt.scene = a.scene;
  if (!a.up_axis.empty()) opt.up_axis = a.up_axis == "y" || a.up_axis == "Y" ? 'Y' : 'Z';
  const UsdExportResult r = export_usd(a.run, opt);
  if (!a.quiet) std::cout << "slender export-usd: " << r.frames << " records\n  " << r.path << '\n';
  return kExitOk;
}

int cmd_info(const std::string& scene) {
  const SceneSpec sc = read_scene_file(scene);
  const std::shared_ptr<const Model> model = build_model(sc);
  std::cout << model_info(*model);
  return kExitOk;
}

struct FmuArgs {
  std::string scene, out, outputs = fmu_default_outputs(), library;
  bool quiet = false;
};

// the scene packed into an FMU
int cmd_fmu(const FmuArgs& a) {
  FmuPackOptions o;
  o.scene = a.scene;
  o.out = a.out;
  o.outputs = a.outputs;
  o.library = a.library;
  const FmuPackResult r = pack_fmu(o);
  if (!a.quiet) {
    std::cout << "slender fmu: " << r.inputs << " inputs, " << r.outputs << " outputs\n  " << r.path
              << '\n';
  }
  return kExitOk;
}

int run_main(int argc, char** argv) {
  CLI::App app{"Slender: discrete elastic rod simulation", "slender"};
  app.set_version_flag("--version", std::string("slender ") + SLENDER_VERSION);
  app.require_subcommand(1);

  // --solver values: the names linear_solver_from_name knows
  const CLI::Validator solver_names(
      [](const std::string& v) {
        LinearSolverKind k;
        return linear_solver_from_name(v, k)
                   ? std::string()
                   : "unknown solver '" + v + "' (" + linear_solver_names() + ")";
      },
      "SOLVER");

  RunArgs ra;
  CLI::App* run = app.add_subcommand("run", "run a scene and write its outputs");
  run->add_option("scene", ra.scene, "scene file (JSON)")->required();
  run->add_option("--out", ra.out, "output folder (default: the scene's output.dir)");
  CLI::Option* duration = run->add_option("--duration", ra.duration, "simulated time [s]");
  CLI::Option* dt = run->add_option("--dt", ra.dt, "time step [s]");
  CLI::Option* every =
      run->add_option("--every", ra.every, "record every N-th step (0: first and last only)");
  run->add_option("--backend", ra.backend, "cpu or cuda (default: the scene's)")
      ->check(CLI::IsMember(std::vector<std::string>{"cpu", "cuda"}));
  run->add_option("--solver", ra.solver,
                  "linear solver: auto (banded LU for rods, else CHOLMOD, or sparse LU for "
                  "non-symmetric Jacobians), cholmod, eigen-ldlt, sparse-lu, pcg (block-Jacobi "
                  "CG), amg (CG with a multigrid preconditioner: large shells), pcg-mixed (pcg "
                  "with the matrix in single precision), matrix-free (pcg with no Jacobian in "
                  "memory: the stencils evaluated in each product; large rod networks) or banded")
      ->check(solver_names);
  run->add_flag("--inexact", ra.inexact,
                "inexact Newton: with an iterative solver, each direction only as exact as the "
                "iteration needs (the scene's integrator.newton.inexact; docs/numerics.md)");
  run->add_flag("--quiet,-q", ra.quiet, "print nothing but errors");
  run->add_flag("--no-output", ra.no_output, "write no files");
  run->add_option("--checkpoint-every", ra.checkpoint_every,
                  "write the whole state to OUT/checkpoint.slck every N steps (atomically)");
  run->add_flag("--render", ra.render,
                "when the run ends, render its frames into a video (python3 -m slender.render "
                "OUT --scene SCENE; docs/rendering.md)");
  run->add_option("--resume", ra.resume,
                  "continue from a checkpoint of this scene, bit for bit as if uninterrupted, to "
                  "the end of the run that wrote it (or to --duration from the scene's start)");
  run->add_option("--usd", ra.usd,
                  "also write the records into this .usda file (USD ASCII: rods as BasisCurves, "
                  "shells as Mesh, time-sampled; at the VTK frames' cadence; docs/usd.md)");

  ExportUsdArgs ea;
  CLI::App* export_usd_cmd = app.add_subcommand(
      "export-usd", "convert a run's VTK frames (its .pvd series) into one .usda (docs/usd.md)");
  export_usd_cmd->add_option("run", ea.run, "the run's output folder, or its .pvd")->required();
  export_usd_cmd->add_option("--out", ea.out,
                             "the .usda to write (default: NAME.usda beside NAME.pvd)");
  export_usd_cmd->add_option("--scene", ea.scene,
                             "the run's scene file: the prims take its parts' names, the up axis "
                             "its gravity");
  export_usd_cmd
      ->add_option("--up-axis", ea.up_axis, "y or z (default: from the scene's gravity, else z)")
      ->check(CLI::IsMember(std::vector<std::string>{"y", "z", "Y", "Z"}));
  export_usd_cmd->add_flag("--quiet,-q", ea.quiet, "print nothing but errors");

  CompareArgs ca;
  CLI::App* compare = app.add_subcommand(
      "compare", "run a scene on the CPU and the CUDA backend and compare time and states");
  compare->add_option("scene", ca.scene, "scene file (JSON)")->required();
  compare->add_option("--steps", ca.steps, "steps on each backend (default 50)");
  CLI::Option* cdt = compare->add_option("--dt", ca.dt, "time step [s]");
  compare->add_option("--solver", ca.solver, "linear solver: auto, pcg, ... (as for run)")
      ->check(solver_names);

  std::string info_scene;
  CLI::App* info = app.add_subcommand("info", "describe the model a scene builds");
  info->add_option("scene", info_scene, "scene file (JSON)")->required();

  FmuArgs fa;
  CLI::App* fmu = app.add_subcommand(
      "fmu",
      "pack a scene into an FMU (FMI 3.0 co-simulation) for FMPy, Simulink, OpenModelica, "
      "... (docs/fmu.md)");
  fmu->add_option("scene", fa.scene, "scene file (JSON)")->required();
  fmu->add_option("--out", fa.out, "the .fmu to write")->required();
  fmu->add_option("--outputs", fa.outputs,
                  "the outputs, comma-separated: default (= nodes,energies,strains), nodes (the "
                  "scene's output nodes, else each part's ends), PART:NODE, energies, strains, "
                  "reactions");
  fmu->add_option("--library", fa.library,
                  "the FMU library to pack (default: libslender_fmu.so beside "
                  "libslender_host.so, or $SLENDER_FMU_LIBRARY)");
  fmu->add_flag("--quiet,-q", fa.quiet, "print nothing but errors");

  // the Python package's commands: every argument after the command goes to it
  const std::vector<std::pair<std::string, std::string>> py_commands = {
      {"render", "pictures and a video of a run's frames (python3 -m slender.render; --help)"},
      {"plot", "PNG plots of a run's energies.csv and nodes.csv (python3 -m slender.plot)"},
      {"sweep",
       "a parameter study: every combination of --grid FIELD=V1,V2,... (on Ray, or "
       "locally; python3 -m slender.sweep)"}};
  std::vector<CLI::App*> py_apps;
  for (const auto& [name, help] : py_commands) {
    CLI::App* sub = app.add_subcommand(name, help);
    sub->prefix_command();
    sub->set_help_flag();  // --help goes to the Python command
    py_apps.push_back(sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, with exit code 0
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitInput;
  }
  if (run->parsed()) {
    ra.has_duration = duration->count() > 0;
    ra.has_dt = dt->count() > 0;
    ra.has_every = every->count() > 0;
    return cmd_run(ra);
  }
  if (export_usd_cmd->parsed()) return cmd_export_usd(ea);
  if (fmu->parsed()) return cmd_fmu(fa);
  if (compare->parsed()) {
    ca.has_dt = cdt->count() > 0;
    return cmd_compare(ca);
  }
  for (CLI::App* sub : py_apps)
    if (sub->parsed()) return run_python_module(sub->get_name(), sub->remaining());
  return cmd_info(info_scene);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const slender::InputError& e) {
    std::cerr << e.what() << '\n';
    return kExitInput;
  } catch (const slender::Error& e) {
    std::cerr << "error: " << slender::without_check_text(e.what()) << '\n';
    return kExitError;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitError;
  } catch (...) {
    std::cerr << "error: unknown failure\n";
    return kExitError;
  }
}
